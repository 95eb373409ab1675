"""Typed data that crosses a step boundary: what each Lambda step of a workflow receives."""
