; With --mw-branches: the branches whose outcome is recorded, and the places
; where an expression must stay as written. Run on one instrumented
; function's body (branches.ts).
;
; Recorded: the condition of an if (inside its parentheses), the condition of
; a ?: (not GNU's `c ?: b`, whose condition is also its value), the left
; operand of && and ||, and the labels of a switch (its body; the labels are
; its case_statement children).
(if_statement condition: (parenthesized_expression) @if)
(conditional_expression condition: (_) @ternary consequence: (_))
(binary_expression left: (_) @logical operator: ["&&" "||"])
(switch_statement) @switch

; Left alone: expressions that must be constant (case values, array sizes,
; enumerators, bit-field widths, initializer lists, initializers of static,
; extern and thread-local objects, attributes), expressions that are not
; evaluated (sizeof, _Alignof, offsetof, _Generic, types), asm operands,
; __builtin_* calls other than __builtin_expect (some want constants), and
; GNU nested functions (not instrumented).
(case_statement value: (_) @skip)
(sizeof_expression) @skip
(alignof_expression) @skip
(offsetof_expression) @skip
(generic_expression) @skip
(array_declarator) @skip
(abstract_array_declarator) @skip
(initializer_list) @skip
(enumerator) @skip
(bitfield_clause) @skip
(attribute_specifier) @skip
(attribute_declaration) @skip
(gnu_asm_expression) @skip
(type_descriptor) @skip
(macro_type_specifier) @skip
(alignas_qualifier) @skip
(function_definition) @skip
(declaration (storage_class_specifier) @storage) @storage_declaration
(call_expression function: (identifier) @callee) @call
