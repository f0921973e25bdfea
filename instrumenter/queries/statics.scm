; A `static` declaration inside a function body (a static local); each object
; it declares is registered right after its `;`. Run at each `static` token
; inside an instrumented function.
(declaration (storage_class_specifier "static")) @static_declaration
