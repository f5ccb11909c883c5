// The Arrow C Data Interface's one rule a holder follows: release once.
#include "carrow.h"
#include <stddef.h>

// Releases `schema` unless it is NULL or released already (release == NULL).
void carrow_release_schema(struct ArrowSchema *schema) {
    if (schema != NULL && schema->release != NULL) schema->release(schema);
}

// Releases `array` unless it is NULL or released already (release == NULL).
void carrow_release_array(struct ArrowArray *array) {
    if (array != NULL && array->release != NULL) array->release(array);
}
