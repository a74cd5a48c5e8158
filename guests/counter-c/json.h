/*
 * Just enough JSON for the counter: a reader for the shapes it receives (objects of integers,
 * strings as keys) and a writer for the documents it answers. JSON crosses the component boundary
 * as UTF-8 text (the WIT type `json`), so a C environment brings its own parser; any library
 * that compiles for wasm32-wasi would do as well.
 */
#ifndef COUNTER_C_JSON_H
#define COUNTER_C_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A read position in a JSON text of known length (WIT strings are not NUL-terminated). */
typedef struct {
    const char *at;
    const char *end;
} json_reader;

/* A reader over `len` bytes at `text`. */
json_reader json_reader_new(const uint8_t *text, size_t len);

/* Consumes the byte `c` (after whitespace); false if the next byte is another. */
bool json_take(json_reader *r, char c);

/* True when only whitespace is left. */
bool json_at_end(json_reader *r);

/*
 * Reads a string into a fresh NUL-terminated buffer (escapes decoded to UTF-8), stored in `*out`
 * for the caller to free(); its length in bytes in `*len`. False on malformed input.
 */
bool json_read_string(json_reader *r, char **out, size_t *len);

/* Reads an integer that fits in int64_t (no fraction, no exponent). False otherwise. */
bool json_read_int64(json_reader *r, int64_t *out);

/* Skips one value of any kind. False on malformed input or nesting deeper than 64. */
bool json_skip_value(json_reader *r);

/* A growing text buffer, NUL-terminated, that the writer appends to. */
typedef struct {
    char *text;
    size_t len;
    size_t cap;
} json_writer;

/* Appends `s` verbatim. */
void json_write_raw(json_writer *w, const char *s);

/* Appends an int64_t in decimal. */
void json_write_int64(json_writer *w, int64_t value);

/* Appends `len` bytes of UTF-8 at `s` as a quoted, escaped JSON string. */
void json_write_string(json_writer *w, const char *s, size_t len);

#endif
