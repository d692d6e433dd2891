; The module registry: which modules are loaded, and the main one.
; `#reads?` holds when the capture stands for one of the paths (aliases followed, names
; built from constants resolved); `*x` is any path ending in `x`.

; Nothing of this kind is read in this language.
