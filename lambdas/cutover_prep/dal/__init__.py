"""Data access: every DynamoDB key format and S3 evidence path (store.py), the stored run profiles (profiles.py)."""
