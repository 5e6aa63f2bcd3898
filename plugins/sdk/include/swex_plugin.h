/*
 * swex_plugin.h — the swex explorer plugin ABI, version 1, for plugins written in C (or any
 * language with a C FFI).
 *
 * Mirrors the Rust crate swex-plugin (plugins/sdk/src/abi.rs) field for field; a test of that
 * crate compiles this header and compares sizes and offsets with Rust's.
 *
 * A plugin is a shared library that exports
 *
 *     const SwexExplorerVTable *swex_explorer_v1(void);
 *
 * returning a pointer to a table that lives as long as the library. The host reads
 * abi_version and struct_size before anything else and refuses a table whose abi_version is
 * not SWEX_ABI_VERSION. New fields are only ever appended to the tables; check struct_size
 * before reading a field that a later version added.
 *
 * Data crosses as UTF-8 JSON (see plugins/sdk/src/types.rs and docs/writing-an-explorer.md):
 * the request {instance_id, issue, top_k, line_budget?, config?, ground_truth?, repo_root?},
 * the response {"regions": [{"path", "start", "end", "score"?, "why"?}, ...], "notes"?: [...]}
 * with regions best first, 1-based closed intervals, end = -1 meaning "to the end of the file".
 *
 * Memory: each side frees what it allocated. Buffers the plugin writes into `out`/`out_error`
 * are released by the host through the vtable's free_buffer; buffers a service returns are
 * released by the plugin through the services table's free_buffer. Inputs (SwexBytes) are
 * borrowed for the duration of the call.
 *
 * Errors: every function returns a status; on a non-OK status the output buffer holds a UTF-8
 * message. No exception or unwind may cross the boundary.
 *
 * Threads: explore may be called concurrently on one instance; services may be called from any
 * thread while explore runs, and not after it returned.
 */
#ifndef SWEX_PLUGIN_H
#define SWEX_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SWEX_ABI_VERSION 1u
#define SWEX_ENTRY_SYMBOL "swex_explorer_v1"

#define SWEX_OK 0
#define SWEX_ERR_INVALID_INPUT 1
#define SWEX_ERR_FAILED 2
#define SWEX_ERR_PANIC 3
#define SWEX_ERR_UNAVAILABLE 4 /* services only: the backend lacks this index */
#define SWEX_ERR_NOT_FOUND 5   /* services only: no such path or symbol */

/* Borrowed input bytes, valid during one call. ptr may be NULL when len is 0. */
typedef struct SwexBytes {
    const uint8_t *ptr;
    size_t len;
} SwexBytes;

/* An owned output buffer; released by the free_buffer of the side that filled it. */
typedef struct SwexBuffer {
    uint8_t *ptr;
    size_t len;
} SwexBuffer;

typedef int32_t (*SwexServiceFn)(const void *context, SwexBytes args, SwexBuffer *out);
typedef void (*SwexServiceFreeFn)(const void *context, SwexBuffer buffer);

/* The services the host passes to explore. A NULL slot is not provided by this host. */
typedef struct SwexServices {
    uint32_t abi_version;
    uint32_t struct_size;
    const void *context; /* pass back as the first argument of every call */
    SwexServiceFreeFn free_buffer;
    SwexServiceFn list_files;            /* {"under"?} -> {"files": [{path, size, language?, line_count?}]} */
    SwexServiceFn file_info;             /* {"path"} -> {"file": {...}} */
    SwexServiceFn read_lines;            /* {"path", "start"?, "end"?} -> {"start", "lines": [...], "total_lines"} */
    SwexServiceFn chunks;                /* {"path"} -> {"chunks": [{start, end, kind, name?}]} */
    SwexServiceFn lexical_search;        /* {"query", "limit", "under"?} -> {"hits": [...]} */
    SwexServiceFn dense_search;          /* lexical_search's fields + "mode"? ("auto"|"full"|"rerank"), "candidates"?,
                                            "rerank_regions"? [{path, start, end}] -> {"hits": [...], "mode"?, "scored"?, "embedded"?} */
    SwexServiceFn definitions;           /* {"name", "limit"?} -> {"definitions": [...]} */
    SwexServiceFn graph_neighbours;      /* {"node": {path, name?}, "edge_kinds"?, "direction"?, "limit"?} -> {"neighbours": [...]} */
    SwexServiceFn personalized_pagerank; /* {"seeds": [{node, weight}], "limit", "damping"?} -> {"nodes": [...]} */
    SwexServiceFn grep;                  /* {"pattern", "path_glob"?, "case_insensitive"?, "limit"} -> {"matches": [...], "truncated"} */
    /* Appended after the first release: check struct_size before using the slots below. */
    SwexServiceFn issue_clues;           /* {"text"} -> {"frames": [...], "paths", "identifiers", "code_spans", "terms": [{text, weight}]} */
    SwexServiceFn code_search;           /* {"query", "limit", "per_file"?, "under"?, "dense"?} -> {"hits": [...], "query_kind", "dense"} */
    SwexServiceFn history_search;        /* {"query", "paths"?, "limit"} -> {"hits": [{path, score}], "commit", "commits"} */
} SwexServices;

typedef int32_t (*SwexCreateFn)(SwexBytes config, void **out_instance, SwexBuffer *out_error);
typedef int32_t (*SwexExploreFn)(void *instance, SwexBytes request, const SwexServices *services,
                                 SwexBuffer *out);
typedef void (*SwexPluginFreeFn)(SwexBuffer buffer);
typedef void (*SwexDestroyFn)(void *instance);

/* The table a plugin exports through swex_explorer_v1(). */
typedef struct SwexExplorerVTable {
    uint32_t abi_version; /* = SWEX_ABI_VERSION */
    uint32_t struct_size; /* = sizeof(SwexExplorerVTable) */
    const char *name;        /* static, NUL-terminated UTF-8, [a-z0-9_-]+ */
    const char *description; /* static, NUL-terminated UTF-8, or NULL */
    SwexCreateFn create;
    SwexExploreFn explore;
    SwexPluginFreeFn free_buffer;
    SwexDestroyFn destroy;
} SwexExplorerVTable;

typedef const SwexExplorerVTable *(*SwexVTableGetter)(void);

#ifdef __cplusplus
}
#endif

#endif /* SWEX_PLUGIN_H */
