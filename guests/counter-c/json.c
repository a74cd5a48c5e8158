/* Just enough JSON for the counter: see json.h. */
#include "json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nesting depth json_skip_value accepts, so hostile input cannot exhaust the guest's stack. */
#define MAX_DEPTH 64

/*
 * realloc that never answers NULL: out of memory, the guest traps, and the host answers the
 * call with `out_of_memory` and rebuilds the episode as it was before the call.
 */
static void *grow(void *ptr, size_t size) {
    void *grown = realloc(ptr, size);
    if (grown == NULL) {
        abort();
    }
    return grown;
}

json_reader json_reader_new(const uint8_t *text, size_t len) {
    return (json_reader){(const char *)text, (const char *)text + len};
}

static void skip_whitespace(json_reader *r) {
    while (r->at < r->end && (*r->at == ' ' || *r->at == '\t' || *r->at == '\n' || *r->at == '\r')) {
        r->at++;
    }
}

bool json_take(json_reader *r, char c) {
    skip_whitespace(r);
    if (r->at < r->end && *r->at == c) {
        r->at++;
        return true;
    }
    return false;
}

bool json_at_end(json_reader *r) {
    skip_whitespace(r);
    return r->at == r->end;
}

/* Reads the four hex digits of a \u escape. */
static bool read_hex4(json_reader *r, uint32_t *out) {
    if (r->end - r->at < 4) {
        return false;
    }
    uint32_t value = 0;
    for (int i = 0; i < 4; i++) {
        char c = *r->at++;
        value <<= 4;
        if (c >= '0' && c <= '9') {
            value |= (uint32_t)(c - '0');
        } else if (c >= 'a' && c <= 'f') {
            value |= (uint32_t)(c - 'a' + 10);
        } else if (c >= 'A' && c <= 'F') {
            value |= (uint32_t)(c - 'A' + 10);
        } else {
            return false;
        }
    }
    *out = value;
    return true;
}

/* Reads the code point of a \u escape (after the `u`), joining a UTF-16 surrogate pair. */
static bool read_escaped_code_point(json_reader *r, uint32_t *out) {
    uint32_t high;
    if (!read_hex4(r, &high)) {
        return false;
    }
    if (high < 0xD800 || high > 0xDFFF) {
        *out = high;
        return true;
    }
    uint32_t low;
    if (high > 0xDBFF || r->end - r->at < 2 || r->at[0] != '\\' || r->at[1] != 'u') {
        return false;
    }
    r->at += 2;
    if (!read_hex4(r, &low) || low < 0xDC00 || low > 0xDFFF) {
        return false;
    }
    *out = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
    return true;
}

/* Appends a code point as UTF-8; `buf` has room for 4 more bytes. */
static size_t put_utf8(char *buf, uint32_t cp) {
    if (cp < 0x80) {
        buf[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        buf[0] = (char)(0xC0 | (cp >> 6));
        buf[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        buf[0] = (char)(0xE0 | (cp >> 12));
        buf[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        buf[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    buf[0] = (char)(0xF0 | (cp >> 18));
    buf[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    buf[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    buf[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

bool json_read_string(json_reader *r, char **out, size_t *len) {
    if (!json_take(r, '"')) {
        return false;
    }
    /* The decoded text is never longer than the encoded one. */
    size_t cap = (size_t)(r->end - r->at) + 1;
    char *buf = grow(NULL, cap);
    size_t n = 0;
    while (r->at < r->end) {
        unsigned char c = (unsigned char)*r->at++;
        if (c == '"') {
            buf[n] = '\0';
            *out = buf;
            *len = n;
            return true;
        }
        if (c < 0x20) {
            break;
        }
        if (c != '\\') {
            buf[n++] = (char)c;
            continue;
        }
        if (r->at == r->end) {
            break;
        }
        char escape = *r->at++;
        uint32_t cp;
        switch (escape) {
        case '"': buf[n++] = '"'; continue;
        case '\\': buf[n++] = '\\'; continue;
        case '/': buf[n++] = '/'; continue;
        case 'b': buf[n++] = '\b'; continue;
        case 'f': buf[n++] = '\f'; continue;
        case 'n': buf[n++] = '\n'; continue;
        case 'r': buf[n++] = '\r'; continue;
        case 't': buf[n++] = '\t'; continue;
        case 'u':
            /* 6 (or 12) escaped bytes become at most 3 (or 4) UTF-8 bytes. */
            if (!read_escaped_code_point(r, &cp)) {
                break;
            }
            n += put_utf8(buf + n, cp);
            continue;
        default:
            break;
        }
        break; /* a malformed escape */
    }
    free(buf);
    return false;
}

bool json_read_int64(json_reader *r, int64_t *out) {
    skip_whitespace(r);
    bool negative = json_take(r, '-');
    if (r->at == r->end || *r->at < '0' || *r->at > '9' || (*r->at == '0' && r->end - r->at > 1 &&
                                                            r->at[1] >= '0' && r->at[1] <= '9')) {
        return false;
    }
    /* Accumulate negatively: the range of int64_t reaches one further below zero than above. */
    int64_t value = 0;
    while (r->at < r->end && *r->at >= '0' && *r->at <= '9') {
        int digit = *r->at++ - '0';
        if (value < (INT64_MIN + digit) / 10) {
            return false;
        }
        value = value * 10 - digit;
    }
    if (r->at < r->end && (*r->at == '.' || *r->at == 'e' || *r->at == 'E')) {
        return false;
    }
    if (!negative) {
        if (value == INT64_MIN) {
            return false;
        }
        value = -value;
    }
    *out = value;
    return true;
}

/* Skips the literal `word` (true, false, null). */
static bool skip_literal(json_reader *r, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(r->end - r->at) < n || memcmp(r->at, word, n) != 0) {
        return false;
    }
    r->at += n;
    return true;
}

/* Skips a number, checking only that it is made of number characters. */
static bool skip_number(json_reader *r) {
    const char *start = r->at;
    while (r->at < r->end && strchr("+-0123456789.eE", *r->at) != NULL) {
        r->at++;
    }
    return r->at > start;
}

static bool skip_value_at(json_reader *r, int depth) {
    if (depth > MAX_DEPTH) {
        return false;
    }
    skip_whitespace(r);
    if (r->at == r->end) {
        return false;
    }
    char *text;
    size_t len;
    switch (*r->at) {
    case '"':
        if (!json_read_string(r, &text, &len)) {
            return false;
        }
        free(text);
        return true;
    case '{':
        r->at++;
        if (json_take(r, '}')) {
            return true;
        }
        do {
            if (!json_read_string(r, &text, &len)) {
                return false;
            }
            free(text);
            if (!json_take(r, ':') || !skip_value_at(r, depth + 1)) {
                return false;
            }
        } while (json_take(r, ','));
        return json_take(r, '}');
    case '[':
        r->at++;
        if (json_take(r, ']')) {
            return true;
        }
        do {
            if (!skip_value_at(r, depth + 1)) {
                return false;
            }
        } while (json_take(r, ','));
        return json_take(r, ']');
    case 't':
        return skip_literal(r, "true");
    case 'f':
        return skip_literal(r, "false");
    case 'n':
        return skip_literal(r, "null");
    default:
        return skip_number(r);
    }
}

bool json_skip_value(json_reader *r) {
    return skip_value_at(r, 0);
}

/* Makes room for `more` bytes and the terminating NUL. */
static void reserve(json_writer *w, size_t more) {
    if (w->len + more + 1 <= w->cap) {
        return;
    }
    size_t cap = w->cap ? w->cap : 64;
    while (cap < w->len + more + 1) {
        cap *= 2;
    }
    w->text = grow(w->text, cap);
    w->cap = cap;
}

static void append(json_writer *w, const char *s, size_t n) {
    reserve(w, n);
    memcpy(w->text + w->len, s, n);
    w->len += n;
    w->text[w->len] = '\0';
}

void json_write_raw(json_writer *w, const char *s) {
    append(w, s, strlen(s));
}

void json_write_int64(json_writer *w, int64_t value) {
    char digits[24];
    int n = snprintf(digits, sizeof digits, "%" PRId64, value);
    append(w, digits, (size_t)n);
}

void json_write_string(json_writer *w, const char *s, size_t len) {
    append(w, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        char escaped[8];
        if (c == '"' || c == '\\') {
            escaped[0] = '\\';
            escaped[1] = (char)c;
            append(w, escaped, 2);
        } else if (c < 0x20) {
            snprintf(escaped, sizeof escaped, "\\u%04x", c);
            append(w, escaped, 6);
        } else {
            append(w, (const char *)&c, 1);
        }
    }
    append(w, "\"", 1);
}
