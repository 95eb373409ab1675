"""The command line: `cutover-prep` (main.py) and its talk with a deployed stack (remote.py). Not shipped to Lambda."""
