/*
 * counter-c: the README's counter environment (guests/counter, in Rust) written in C.
 *
 * A counter per caller role, two tools, and the data plane:
 *   {environment_name}_add     adds `by` to the caller's counter and answers the new value
 *   {environment_name}_counts  every role's counter (read-only)
 *   data/reset                 forgets every counter
 *   data/add                   sets counters from data parts (or JSON file parts) shaped
 *                              {"counts": {"<role>": <integer>, ...}}, all parts or none
 *   data/get                   one data part, {"counts": {...}}
 *
 * The component exports the `env` interface of wit/environment. `make guests-c` generates the C
 * bindings (environment.h, environment.c) with `envhost-build-c bindings`, compiles this file with
 * Debian's clang and wasi-libc for wasm32-wasi, and makes the core module a component with
 * `envhost-build-c component` (wasmtime's WASI preview1 adapter).
 *
 * Ownership follows wit-bindgen's C conventions: an export owns its arguments (it frees them),
 * and everything it answers must be heap memory, which the generated post-return code frees once
 * the host has copied it out. The host validates tool arguments against the input schema before
 * the guest sees them, and turns a trap (abort(), out of memory) into an error answer to the one
 * failing call, rebuilding the episode as it was before that call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "environment.h"
#include "json.h"

/* Shorter names for the generated types this file uses. */
typedef environment_string_t string;
typedef exports_agentenv_environment_env_json_t json_text;
typedef exports_agentenv_environment_env_env_error_t env_error;
typedef exports_agentenv_environment_env_env_info_t env_info;
typedef exports_agentenv_environment_env_tool_info_t tool_info;
typedef exports_agentenv_environment_env_tool_result_t tool_result;
typedef exports_agentenv_environment_env_content_block_t content_block;
typedef exports_agentenv_environment_env_part_t part;
typedef exports_agentenv_environment_env_list_part_t part_list;
typedef exports_agentenv_environment_env_operation_t operation;

/* The tools' names as declared: the host replaces {environment_name} with the card's name. */
#define ADD_TOOL "{environment_name}_add"
#define COUNTS_TOOL "{environment_name}_counts"

/* ------------------------------------------------------------------------------ the state */

/* One role's counter. `role` is UTF-8 of `role_len` bytes (NUL-terminated for convenience). */
typedef struct {
    char *role;
    size_t role_len;
    int64_t count;
} counter;

/* Counters kept sorted by role, bytewise (the order of the Rust example's BTreeMap). */
typedef struct {
    counter *items;
    size_t len;
    size_t cap;
} counter_table;

/* Every role's counter: the environment's whole state, one per episode (one instance each). */
static counter_table counts;

/* calloc that never answers NULL (out of memory, the guest traps; see the top of the file). */
static void *must_calloc(size_t n, size_t size) {
    void *ptr = calloc(n, size);
    if (ptr == NULL) {
        abort();
    }
    return ptr;
}

/* Orders roles bytewise, a shorter role before the longer ones it prefixes. */
static int compare_roles(const char *a, size_t a_len, const char *b, size_t b_len) {
    int order = memcmp(a, b, a_len < b_len ? a_len : b_len);
    if (order != 0) {
        return order;
    }
    return (a_len > b_len) - (a_len < b_len);
}

/* The counter of `role` in `table`, created at 0 when missing. */
static int64_t *counter_of(counter_table *table, const char *role, size_t role_len) {
    size_t at = 0;
    while (at < table->len) {
        int order = compare_roles(table->items[at].role, table->items[at].role_len, role, role_len);
        if (order == 0) {
            return &table->items[at].count;
        }
        if (order > 0) {
            break;
        }
        at++;
    }
    if (table->len == table->cap) {
        table->cap = table->cap ? table->cap * 2 : 8;
        table->items = realloc(table->items, table->cap * sizeof *table->items);
        if (table->items == NULL) {
            abort();
        }
    }
    memmove(&table->items[at + 1], &table->items[at], (table->len - at) * sizeof *table->items);
    char *copy = must_calloc(role_len + 1, 1);
    memcpy(copy, role, role_len);
    table->items[at] = (counter){copy, role_len, 0};
    table->len++;
    return &table->items[at].count;
}

/* Empties `table`. */
static void clear_table(counter_table *table) {
    for (size_t i = 0; i < table->len; i++) {
        free(table->items[i].role);
    }
    free(table->items);
    *table = (counter_table){0};
}

/* Writes `table` as a JSON object, {"<role>": <count>, ...}. */
static void write_table(json_writer *w, const counter_table *table) {
    json_write_raw(w, "{");
    for (size_t i = 0; i < table->len; i++) {
        json_write_raw(w, i ? ", " : "");
        json_write_string(w, table->items[i].role, table->items[i].role_len);
        json_write_raw(w, ": ");
        json_write_int64(w, table->items[i].count);
    }
    json_write_raw(w, "}");
}

/* ------------------------------------------------------------------------------ helpers */

/* A heap copy of `s`, as every string the guest answers must be. */
static string dup(const char *s) {
    string out;
    environment_string_dup(&out, s);
    return out;
}

/* Hands a writer's text over as an answer string (the post-return code frees it). */
static string take_text(json_writer *w) {
    string out = {(uint8_t *)w->text, w->len};
    *w = (json_writer){0};
    return out;
}

/*
 * Fills `err` with a coded error and answers false, the "failed" return of every fallible
 * export. `hint` may be NULL. The host turns it into an isError tool result
 * `"<code>: <message>"`, a data-plane -32000 error, or an extension's HTTP `status`.
 */
static bool fail(env_error *err, const char *code, const char *message, const char *hint) {
    *err = (env_error){
        .code = dup(code),
        .message = dup(message),
        .retryable = false,
        .applied = AGENTENV_ENVIRONMENT_TYPES_APPLIED_NO,
        .hint = {.is_some = hint != NULL},
        .status = 400,
    };
    if (hint != NULL) {
        err->hint.val = dup(hint);
    }
    return false;
}

/* A tool result of one text block and, when `structured` is not NULL, structured content. */
static tool_result result_of(string text, json_writer *structured) {
    content_block *block = must_calloc(1, sizeof *block);
    block->tag = EXPORTS_AGENTENV_ENVIRONMENT_ENV_CONTENT_BLOCK_TEXT;
    block->val.text = text;
    tool_result result = {.content = {block, 1}, .is_error = false};
    if (structured != NULL) {
        result.structured_content.is_some = true;
        result.structured_content.val = take_text(structured);
    }
    return result;
}

/* ------------------------------------------------------------------------------ describe */

void exports_agentenv_environment_env_describe(env_info *ret) {
    tool_info *tools = must_calloc(2, sizeof *tools);
    tools[0] = (tool_info){
        .name = dup(ADD_TOOL),
        .description = {true, dup("Add to the caller's counter; answers the new value.")},
        /* JSON Schema of the arguments: the host checks every call against it. */
        .input_schema = dup("{\"type\": \"object\", \"properties\": {\"by\": {\"type\": \"integer\", "
                            "\"description\": \"How much to add (may be negative).\"}}, "
                            "\"required\": [\"by\"]}"),
        /* With an output schema, a successful call must answer structured content. */
        .output_schema = {true, dup("{\"type\": \"object\", \"properties\": {\"result\": "
                                    "{\"type\": \"integer\"}}, \"required\": [\"result\"]}")},
    };
    tools[1] = (tool_info){
        .name = dup(COUNTS_TOOL),
        .description = {true, dup("Every role's counter.")},
        .input_schema = dup("{\"type\": \"object\", \"properties\": {}}"),
        .output_schema = {true, dup("{\"type\": \"object\", "
                                    "\"additionalProperties\": {\"type\": \"integer\"}}")},
        .annotations = {.is_some = true, .val = {.read_only_hint = {true, true}}},
    };
    operation *operations = must_calloc(3, sizeof *operations);
    operations[0] = EXPORTS_AGENTENV_ENVIRONMENT_ENV_OPERATION_RESET;
    operations[1] = EXPORTS_AGENTENV_ENVIRONMENT_ENV_OPERATION_ADD;
    operations[2] = EXPORTS_AGENTENV_ENVIRONMENT_ENV_OPERATION_GET;
    *ret = (env_info){
        .name = dup("counter-c"),
        .tools = {tools, 2},
        .extensions = {NULL, 0},
        .operations = {operations, 3},
        .tool_access = false,
    };
}

/* ------------------------------------------------------------------------------ tools */

/* Reads `by` from the arguments object {"by": <integer>}. */
static bool read_by(const json_text *arguments, int64_t *by) {
    json_reader r = json_reader_new(arguments->ptr, arguments->len);
    bool found = false;
    if (!json_take(&r, '{')) {
        return false;
    }
    if (json_take(&r, '}')) {
        return false;
    }
    do {
        char *key;
        size_t key_len;
        if (!json_read_string(&r, &key, &key_len)) {
            return false;
        }
        bool is_by = key_len == 2 && memcmp(key, "by", 2) == 0;
        free(key);
        if (!json_take(&r, ':')) {
            return false;
        }
        if (is_by ? !json_read_int64(&r, by) : !json_skip_value(&r)) {
            return false;
        }
        found |= is_by;
    } while (json_take(&r, ','));
    return found && json_take(&r, '}') && json_at_end(&r);
}

/* {environment_name}_add: adds `by` to the caller's counter; answers the new value. */
static bool add(const json_text *arguments, tool_result *ret, env_error *err) {
    int64_t by;
    if (!read_by(arguments, &by)) {
        /* The schema admits integers of any size; this one does not fit in 64 bits. */
        return fail(err, "invalid_arguments", "`by` must be an integer of 64 bits", NULL);
    }
    /* Who is calling: the host's context of the call being served (role and session). */
    agentenv_environment_context_call_context_t context;
    bool in_call = agentenv_environment_context_current(&context);
    const char *role = "default";
    size_t role_len = strlen(role);
    if (in_call && context.caller.role.is_some) {
        role = (const char *)context.caller.role.val.ptr;
        role_len = context.caller.role.val.len;
    }
    int64_t *count = counter_of(&counts, role, role_len);
    if (in_call) {
        agentenv_environment_context_call_context_free(&context);
    }
    int64_t sum;
    if (__builtin_add_overflow(*count, by, &sum)) {
        return fail(err, "overflow", "the counter would overflow", NULL);
    }
    *count = sum;
    json_writer text = {0};
    json_write_int64(&text, sum);
    json_writer structured = {0};
    json_write_raw(&structured, "{\"result\": ");
    json_write_int64(&structured, sum);
    json_write_raw(&structured, "}");
    *ret = result_of(take_text(&text), &structured);
    return true;
}

/* {environment_name}_counts: every role's counter, as text and as structured content. */
static bool counts_tool(tool_result *ret) {
    json_writer text = {0};
    write_table(&text, &counts);
    json_writer structured = {0};
    write_table(&structured, &counts);
    *ret = result_of(take_text(&text), &structured);
    return true;
}

bool exports_agentenv_environment_env_call_tool(string *name, json_text *arguments, tool_result *ret,
                                                 env_error *err) {
    bool ok;
    if (name->len == strlen(ADD_TOOL) && memcmp(name->ptr, ADD_TOOL, name->len) == 0) {
        ok = add(arguments, ret, err);
    } else if (name->len == strlen(COUNTS_TOOL) && memcmp(name->ptr, COUNTS_TOOL, name->len) == 0) {
        ok = counts_tool(ret);
    } else {
        /* The host only calls the tools describe() declared. */
        ok = fail(err, "unknown_tool", "no such tool", NULL);
    }
    environment_string_free(name);
    exports_agentenv_environment_env_json_free(arguments);
    return ok;
}

/* ------------------------------------------------------------------------------ data plane */

bool exports_agentenv_environment_env_reset(env_error *err) {
    (void)err;
    clear_table(&counts);
    return true;
}

/* Reads {"counts": {"<role>": <integer>, ...}} (other keys ignored) into `into`. */
static bool read_counts_document(const uint8_t *text, size_t len, counter_table *into) {
    json_reader r = json_reader_new(text, len);
    if (!json_take(&r, '{')) {
        return false;
    }
    if (json_take(&r, '}')) {
        return json_at_end(&r);
    }
    do {
        char *key;
        size_t key_len;
        if (!json_read_string(&r, &key, &key_len)) {
            return false;
        }
        bool is_counts = key_len == 6 && memcmp(key, "counts", 6) == 0;
        free(key);
        if (!json_take(&r, ':')) {
            return false;
        }
        if (!is_counts) {
            if (!json_skip_value(&r)) {
                return false;
            }
            continue;
        }
        if (!json_take(&r, '{')) {
            return false;
        }
        if (json_take(&r, '}')) {
            continue;
        }
        do {
            char *role;
            size_t role_len;
            if (!json_read_string(&r, &role, &role_len)) {
                return false;
            }
            int64_t value;
            bool read = json_take(&r, ':') && json_read_int64(&r, &value);
            if (read) {
                *counter_of(into, role, role_len) = value;
            }
            free(role);
            if (!read) {
                return false;
            }
        } while (json_take(&r, ','));
        if (!json_take(&r, '}')) {
            return false;
        }
    } while (json_take(&r, ','));
    return json_take(&r, '}') && json_at_end(&r);
}

/* Reads one part into `into`: data parts and file parts carry the JSON document; text parts
 * carry nothing the counter uses. */
static bool read_part(const part *p, counter_table *into) {
    switch (p->tag) {
    case AGENTENV_ENVIRONMENT_TYPES_PART_DATA:
        return read_counts_document(p->val.data.data.ptr, p->val.data.data.len, into);
    case AGENTENV_ENVIRONMENT_TYPES_PART_FILE:
        /* The host fetched file://, http(s):// and inline base64 files: they arrive as bytes. */
        return p->val.file.file.tag == AGENTENV_ENVIRONMENT_TYPES_FILE_CONTENT_BYTES &&
               read_counts_document(p->val.file.file.val.bytes.ptr, p->val.file.file.val.bytes.len, into);
    default:
        return true;
    }
}

/* Logs what data/add loaded, with structured fields, into the host's log. */
static void log_loaded(size_t parts, size_t counters) {
    string message;
    environment_string_set(&message, "counters loaded");
    json_writer fields = {0};
    json_write_raw(&fields, "{\"parts\": ");
    json_write_int64(&fields, (int64_t)parts);
    json_write_raw(&fields, ", \"counters\": ");
    json_write_int64(&fields, (int64_t)counters);
    json_write_raw(&fields, "}");
    string fields_text = {(uint8_t *)fields.text, fields.len};
    /* An import borrows its arguments: they stay ours to free. */
    agentenv_environment_log_write(AGENTENV_ENVIRONMENT_LOG_LEVEL_INFO, &message, &fields_text);
    free(fields.text);
}

bool exports_agentenv_environment_env_add_data(part_list *parts, env_error *err) {
    /* All parts or none: read every part aside first, then apply them together. */
    counter_table staged = {0};
    bool ok = true;
    for (size_t i = 0; ok && i < parts->len; i++) {
        if (!read_part(&parts->ptr[i], &staged)) {
            char message[96];
            snprintf(message, sizeof message, "part %zu is not a counts document", i);
            ok = fail(err, "invalid_data", message,
                      "send {\"counts\": {\"<role>\": <integer>, ...}} as a data part or a JSON file");
        }
    }
    if (ok) {
        for (size_t i = 0; i < staged.len; i++) {
            *counter_of(&counts, staged.items[i].role, staged.items[i].role_len) = staged.items[i].count;
        }
        log_loaded(parts->len, staged.len);
    }
    clear_table(&staged);
    exports_agentenv_environment_env_list_part_free(parts);
    return ok;
}

bool exports_agentenv_environment_env_get_data(part_list *ret, env_error *err) {
    (void)err;
    json_writer data = {0};
    json_write_raw(&data, "{\"counts\": ");
    write_table(&data, &counts);
    json_write_raw(&data, "}");
    part *p = must_calloc(1, sizeof *p);
    p->tag = AGENTENV_ENVIRONMENT_TYPES_PART_DATA;
    p->val.data.data = take_text(&data);
    *ret = (part_list){p, 1};
    return true;
}

/* ------------------------------------------------------------------------------ extensions */

bool exports_agentenv_environment_env_call_extension(string *uri, string *op, json_text *request, json_text *ret,
                                                      env_error *err) {
    (void)ret;
    /* describe() declares no extension, so the host never calls this. */
    environment_string_free(uri);
    environment_string_free(op);
    exports_agentenv_environment_env_json_free(request);
    fail(err, "unknown_extension", "counter-c has no extensions", NULL);
    err->status = 404;
    return false;
}

/* ------------------------------------------------------------------------------- MCP beyond tools */

bool exports_agentenv_environment_env_call_mcp(string *method, json_text *params, json_text *ret,
                                               env_error *err) {
    (void)ret;
    /* No resources, prompts or completions: the host lists nothing for this answer. */
    environment_string_free(method);
    exports_agentenv_environment_env_json_free(params);
    return fail(err, "method_not_found", "counter-c serves no resources or prompts", NULL);
}
