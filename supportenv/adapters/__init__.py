"""What the adapters inside this package share (supportenv.gym, supportenv.mcp): not the pure core,
since a remote backend reaches the wire layer (supportenv.v1, imported only when one is made)."""
