"""The component's app module: serves the port in tickets.py (its imports changed from
../reference.py, nothing else)."""
from envhost_sdk import export
from tickets import Tickets

Env = export(Tickets)
