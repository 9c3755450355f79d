// Package jsonschema validates JSON instances against the subset of JSON Schema 2020-12 that
// the Agent Client Protocol schema uses, without the start-up cost of a general validator.
//
// Start with [Compile], which parses a schema document once and resolves its $refs, then call
// [Schema.Validate] with the name of one of its $defs. A compiled Schema is immutable and safe
// for concurrent use; the package keeps no global state and does nothing at init, so linking it
// costs a binary nothing until a schema is compiled (the reason it exists: a general validator
// compiles its meta-schemas in package init on every process start).
//
// Supported keywords, with 2020-12 semantics:
//
//   - applicators: $ref (local JSON pointers such as #/$defs/X), allOf, anyOf, oneOf (exactly
//     one), not, properties, additionalProperties (boolean or schema), items (one schema);
//   - assertions: type (a name or a list; "integer" is any number without a fractional part,
//     so 1.0 counts), enum, const, required, minimum, maximum, minLength (in code points);
//   - format: the numeric formats int8…uint64 are asserted as integer ranges, "double" as a
//     finite float64; every other format ("uri", "date-time", …) is an annotation, as 2020-12
//     makes it by default;
//   - unevaluatedProperties: only the value true, which asserts nothing;
//   - annotations, ignored: $schema (must name 2020-12 if present), $defs, $comment, title,
//     description, default, examples, deprecated, readOnly, writeOnly, discriminator and x-*.
//
// Any other keyword makes Compile fail rather than be silently skipped, so a schema that grows
// a new keyword fails loudly instead of under-validating.
//
// Numbers are decoded with json.Decoder.UseNumber and compared exactly on their decimal text,
// so uint64 values and numbers such as 1e400 keep their precision.
package jsonschema
