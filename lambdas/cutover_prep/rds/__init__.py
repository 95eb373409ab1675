"""What RDS does and says: restores and instance facts (``instances``), storage initialization progress
(``progress``), each volume's ETA (``volume_eta``), the additional storage volumes (``volumes``).
"""
