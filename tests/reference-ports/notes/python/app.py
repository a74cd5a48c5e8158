"""The component's app module: serves the port in notes.py (its imports changed from
../reference.py, nothing else)."""
from envhost_sdk import export
from notes import Notes

Env = export(Notes)
