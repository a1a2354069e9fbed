"""One session's deliberation: the protocol engines that run one debate (`engines/`),
the DAG around the debates (`dag/`: monitoring, selection, branches, merging, stubs,
final integration), the state they share, their typed events, and the session's
phases in order (`session.py`)."""
