"""How the run reaches the customer's database: credentials from Secrets Manager sent only to the
target (``connection``), which instance a secret belongs to (``secret_binding``), which databases the run
reads (``selection``).
"""
