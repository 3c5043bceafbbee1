"""The benchmark harness (``layoutbench``).

Importing the package, before anything imports pyarrow, keeps pyarrow's allocator (mimalloc) from
handing freed memory back to the kernel (``MIMALLOC_PURGE_DELAY=-1``; a value already in the
environment wins). Our writers and rewrites run in this process and allocate and free tens of MB
per file; purged after mimalloc's default 10 ms, that memory came back through page faults, each
zeroing a fresh (often 2 MB huge) page. Measured on the default workload's 15 Option 1 compactions
(loaded 2-core machine): 2.3 s of kernel time fell to 1.2 s for the first engine after a batch,
0.6 s of 1.3 s for the next. A JVM writer keeps its heap the same way.
"""

import os

os.environ.setdefault("MIMALLOC_PURGE_DELAY", "-1")
