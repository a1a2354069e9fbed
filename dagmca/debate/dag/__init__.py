"""The DAG around the debates: observers flag tensions, the selector picks
branches, branches run in parallel and know of each other, finished branches merge,
open stubs are revisited, and the root integrator reads the whole graph."""
