; What stands at file scope: function definitions (the functions to
; instrument), declarations (file-scope objects are picked out of them in
; objects.ts) and typedefs (to tell `fn_t f;`, a function declaration, from
; an object). Run on the root with maxStartDepth 0: only its children match.
(translation_unit (function_definition) @function)
(translation_unit (declaration) @file_declaration)
(translation_unit (type_definition) @typedef)
