"""The files a session writes beside the graph: mca_report.json per debate,
final_state.json, metrics.json (writers.py, their models in models.py), and the live
status.json and events.jsonl (live.py)."""
