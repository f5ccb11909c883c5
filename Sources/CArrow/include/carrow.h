// The Arrow C Data Interface (arrow.apache.org, "The Arrow C data
// interface"): the two structs through which a process hands columnar data to
// a library in the same process without copying it or linking an Arrow
// library. Written here from the specification; its field order and types are
// the ABI, so they must not change.
//
// A producer fills a struct and sets `release`; whoever holds it last calls
// `release` once, which frees what the producer allocated and sets `release`
// to NULL (a released struct). libgeofence reads pyarrow's record batches
// (a struct array "+s" whose children are the columns) and returns its own,
// built by GeofenceExtension/Arrow/ArrowBuilder.swift.
#ifndef CARROW_H
#define CARROW_H

#include <stdint.h>

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

// The type of an array: `format` is a short string ("u" utf8, "g" float64,
// "l" int64, "tsu:UTC" timestamp in microseconds, "+s" struct, ...).
struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};

// The data of an array: `length` values from `offset`, in `n_buffers`
// buffers (buffer 0 the validity bitmap, NULL when no value is null).
struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};

// Calls a struct's release callback if it has one (the holder's duty).
void carrow_release_schema(struct ArrowSchema *schema);
void carrow_release_array(struct ArrowArray *array);

#endif
