"""Issue 15: restore one snapshot onto several configurations, measure, price and recommend one."""
