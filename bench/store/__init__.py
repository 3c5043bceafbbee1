"""An S3-protocol object store on the loopback for runs and tests: the server, a counting proxy in
front of it, and the table URIs that point engines at it."""
