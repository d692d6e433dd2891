; The current thread's name or identity.
; `#reads?` holds when the capture stands for one of the paths (aliases followed, names
; built from constants resolved); `*x` is any path ending in `x`.

([(identifier) (member_expression) (subscript_expression) (call_expression)] @read
  (#reads? @read
    "worker_threads.threadId"
    "worker_threads.isMainThread"
    "worker_threads.workerData"))
