"""Prices: RDS's on-demand prices (``book``: the Price List API, else the shipped dated ``prices.json``) and what a
run costs in Lambda and Step Functions (``costs``). Shared by the estimate and the comparison.

Import each from its module: this package imports none of them.
"""
