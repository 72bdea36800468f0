/* The runtime-object registry (src/rt/objects.h): a freed or foreign
 * handle is refused by address, never read. Under ASan a read of the freed
 * object below would be reported as a heap-use-after-free. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rt/objects.h"
#include "util/detail.h"

typedef struct thing {
    gpo_rt_obj obj; /* first, as every backend object */
    int payload;
} thing;

static void a_live_handle_is_owned_by_its_kind_only(void **state)
{
    (void)state;
    gpo_rt_objects r;
    gpo_rt_objects_init(&r);
    thing t = {.payload = 7};
    gpo_rt_objects_add(&r, &t.obj, GPO_RT_BUFFER);
    assert_true(gpo_rt_objects_owns(&r, &t, GPO_RT_BUFFER));
    assert_false(gpo_rt_objects_owns(&r, &t, GPO_RT_KERNEL));
    assert_false(gpo_rt_objects_owns(&r, NULL, GPO_RT_BUFFER));
    assert_false(gpo_rt_objects_owns(NULL, &t, GPO_RT_BUFFER));
    assert_false(gpo_rt_objects_owns(&r, &t, (gpo_rt_kind)GPO_RT_KINDS));
    assert_int_equal(gpo_rt_objects_count(&r, GPO_RT_BUFFER), 1);
    gpo_rt_objects_remove(&r, &t.obj);
    assert_false(gpo_rt_objects_owns(&r, &t, GPO_RT_BUFFER));
    gpo_rt_objects_destroy(&r);
}

static void a_freed_handle_is_refused_without_being_read(void **state)
{
    (void)state;
    gpo_rt_objects r;
    gpo_rt_objects_init(&r);
    thing *keep = calloc(1, sizeof *keep);
    thing *gone = calloc(1, sizeof *gone);
    assert_non_null(keep);
    assert_non_null(gone);
    gpo_rt_objects_add(&r, &keep->obj, GPO_RT_PROGRAM);
    gpo_rt_objects_add(&r, &gone->obj, GPO_RT_PROGRAM);
    gpo_rt_objects_remove(&r, &gone->obj);
    /* The address as a caller would keep it (an integer, so the compiler
     * does not flag the deliberate use of a stale pointer). */
    volatile uintptr_t stale = (uintptr_t)gone;
    free(gone);
    /* ASan would stop here if owns() looked inside the freed block. */
    assert_false(gpo_rt_objects_owns(&r, (const void *)stale, GPO_RT_PROGRAM));
    assert_true(gpo_rt_objects_owns(&r, keep, GPO_RT_PROGRAM));
    gpo_rt_objects_remove(&r, &keep->obj);
    free(keep);
    gpo_rt_objects_destroy(&r);
}

static void another_sessions_handle_is_refused(void **state)
{
    (void)state;
    gpo_rt_objects a, b;
    gpo_rt_objects_init(&a);
    gpo_rt_objects_init(&b);
    thing t = {0};
    gpo_rt_objects_add(&a, &t.obj, GPO_RT_KERNEL);
    assert_false(gpo_rt_objects_owns(&b, &t, GPO_RT_KERNEL));
    assert_true(gpo_rt_objects_owns(&a, &t, GPO_RT_KERNEL));
    gpo_rt_objects_remove(&a, &t.obj);
    gpo_rt_objects_destroy(&a);
    gpo_rt_objects_destroy(&b);
}

static void take_hands_back_every_object_once(void **state)
{
    (void)state;
    gpo_rt_objects r;
    gpo_rt_objects_init(&r);
    thing t[3];
    for (int i = 0; i < 3; i++)
        gpo_rt_objects_add(&r, &t[i].obj, GPO_RT_PINNED);
    int seen = 0;
    for (gpo_rt_obj *o; (o = gpo_rt_objects_take(&r, GPO_RT_PINNED, NULL, NULL)) != NULL;) {
        assert_int_equal(o->kind, -1);
        seen++;
    }
    assert_int_equal(seen, 3);
    assert_null(gpo_rt_objects_take(&r, GPO_RT_PINNED, NULL, NULL));
    assert_int_equal(gpo_rt_objects_count(&r, GPO_RT_PINNED), 0);
    gpo_rt_objects_destroy(&r);
}

static int holds(const gpo_rt_obj *o, const void *arg)
{
    return ((const thing *)o)->payload == *(const int *)arg;
}

static void find_returns_the_live_object_a_predicate_accepts(void **state)
{
    (void)state;
    gpo_rt_objects r;
    gpo_rt_objects_init(&r);
    thing t[3];
    for (int i = 0; i < 3; i++) {
        t[i].payload = 10 + i;
        gpo_rt_objects_add(&r, &t[i].obj, GPO_RT_PINNED);
    }
    int want = 11;
    assert_ptr_equal(gpo_rt_objects_find(&r, GPO_RT_PINNED, holds, &want), &t[1].obj);
    /* Only that kind, and only while registered. */
    assert_null(gpo_rt_objects_find(&r, GPO_RT_BUFFER, holds, &want));
    gpo_rt_objects_remove(&r, &t[1].obj);
    assert_null(gpo_rt_objects_find(&r, GPO_RT_PINNED, holds, &want));
    while (gpo_rt_objects_take(&r, GPO_RT_PINNED, NULL, NULL))
        ;
    gpo_rt_objects_destroy(&r);
}

static void take_removes_only_what_the_predicate_accepts(void **state)
{
    (void)state;
    gpo_rt_objects r;
    gpo_rt_objects_init(&r);
    thing t[3];
    for (int i = 0; i < 3; i++) {
        t[i].payload = i % 2;
        gpo_rt_objects_add(&r, &t[i].obj, GPO_RT_KERNEL);
    }
    int odd = 1, even = 0;
    assert_ptr_equal(gpo_rt_objects_take(&r, GPO_RT_KERNEL, holds, &odd), &t[1].obj);
    assert_null(gpo_rt_objects_take(&r, GPO_RT_KERNEL, holds, &odd));
    assert_int_equal(gpo_rt_objects_count(&r, GPO_RT_KERNEL), 2);
    while (gpo_rt_objects_take(&r, GPO_RT_KERNEL, holds, &even))
        ;
    gpo_rt_objects_destroy(&r);
}

/* The order close() destroys in: kernels, programs, pinned, buffers. */
static int destroyed[8], n_destroyed;
static void note_kind(struct gpo_rt *rt, gpo_rt_obj *o)
{
    (void)rt;
    destroyed[n_destroyed++] = ((thing *)o)->payload;
}

static void clear_destroys_kernels_before_programs_before_memory(void **state)
{
    (void)state;
    static const gpo_rt_kind kinds[] = {GPO_RT_BUFFER, GPO_RT_PINNED, GPO_RT_PROGRAM, GPO_RT_KERNEL,
                                        GPO_RT_BUFFER};
    static const gpo_rt_destroy_fn note[GPO_RT_KINDS] = {note_kind, note_kind, note_kind,
                                                         note_kind};
    gpo_rt_objects r;
    gpo_rt_objects_init(&r);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        thing *t = calloc(1, sizeof *t);
        assert_non_null(t);
        t->payload = (int)kinds[i];
        gpo_rt_objects_add(&r, &t->obj, kinds[i]);
    }
    thing *one = calloc(1, sizeof *one);
    assert_non_null(one);
    one->payload = GPO_RT_KERNEL;
    gpo_rt_objects_add(&r, &one->obj, GPO_RT_KERNEL);
    n_destroyed = 0;
    gpo_rt_objects_release(&r, NULL, &one->obj, note);
    assert_int_equal(n_destroyed, 1);
    assert_int_equal(gpo_rt_objects_count(&r, GPO_RT_KERNEL), 1);
    n_destroyed = 0;
    gpo_rt_objects_clear(&r, NULL, note);
    static const int expect[] = {GPO_RT_KERNEL, GPO_RT_PROGRAM, GPO_RT_PINNED, GPO_RT_BUFFER,
                                 GPO_RT_BUFFER};
    assert_int_equal(n_destroyed, 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(destroyed[i], expect[i]);
    gpo_rt_objects_destroy(&r);
}

static void releasing_an_object_destroys_what_it_owns_first(void **state)
{
    (void)state;
    static const gpo_rt_destroy_fn note[GPO_RT_KINDS] = {note_kind, note_kind, note_kind,
                                                         note_kind};
    gpo_rt_objects r;
    gpo_rt_objects_init(&r);
    thing *prog = calloc(1, sizeof *prog), *other = calloc(1, sizeof *other);
    thing *k1 = calloc(1, sizeof *k1), *k2 = calloc(1, sizeof *k2), *k3 = calloc(1, sizeof *k3);
    assert_true(prog && other && k1 && k2 && k3);
    prog->payload = GPO_RT_PROGRAM;
    other->payload = GPO_RT_PROGRAM;
    gpo_rt_objects_add(&r, &prog->obj, GPO_RT_PROGRAM);
    gpo_rt_objects_add(&r, &other->obj, GPO_RT_PROGRAM);
    thing *kernels[] = {k1, k2, k3};
    for (int i = 0; i < 3; i++) {
        kernels[i]->payload = GPO_RT_KERNEL;
        kernels[i]->obj.owner = i < 2 ? (const void *)prog : (const void *)other;
        gpo_rt_objects_add(&r, &kernels[i]->obj, GPO_RT_KERNEL);
    }
    n_destroyed = 0;
    gpo_rt_objects_release(&r, NULL, &prog->obj, note);
    assert_int_equal(n_destroyed, 3);
    assert_int_equal(destroyed[0], GPO_RT_KERNEL);
    assert_int_equal(destroyed[1], GPO_RT_KERNEL);
    assert_int_equal(destroyed[2], GPO_RT_PROGRAM);
    assert_int_equal(gpo_rt_objects_count(&r, GPO_RT_KERNEL), 1);
    assert_true(gpo_rt_objects_owns(&r, k3, GPO_RT_KERNEL));
    gpo_rt_objects_clear(&r, NULL, note);
    gpo_rt_objects_destroy(&r);
}

static void a_pinned_block_is_found_by_its_live_host_address_only(void **state)
{
    (void)state;
    char host[2];
    gpo_rt_objects r;
    gpo_rt_objects_init(&r);
    gpo_rt_pinned p = {.ptr = &host[0]};
    assert_null(gpo_rt_objects_pinned(&r, &host[0]));
    gpo_rt_objects_add(&r, &p.obj, GPO_RT_PINNED);
    assert_ptr_equal(gpo_rt_objects_pinned(&r, &host[0]), &p);
    assert_null(gpo_rt_objects_pinned(&r, &host[1]));
    assert_null(gpo_rt_objects_pinned(&r, NULL));
    gpo_rt_objects_remove(&r, &p.obj);
    assert_null(gpo_rt_objects_pinned(&r, &host[0]));
    gpo_rt_objects_destroy(&r);
}

static void check_refuses_a_stale_handle_in_words(void **state)
{
    (void)state;
    gpo_rt_objects r;
    gpo_rt_objects_init(&r);
    thing t = {0};
    assert_int_equal(gpo_rt_objects_check(&r, &t, GPO_RT_KERNEL, "x:0", "launch"),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_string_equal(gpo_detail_get(), "x:0 launch: not a kernel of this session (NULL, freed, "
                                          "or another session's)");
    gpo_rt_objects_add(&r, &t.obj, GPO_RT_KERNEL);
    assert_int_equal(gpo_rt_objects_check(&r, &t, GPO_RT_KERNEL, "x:0", "launch"), GPUOPT_OK);
    gpo_rt_objects_remove(&r, &t.obj);
    gpo_rt_objects_destroy(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_live_handle_is_owned_by_its_kind_only),
        cmocka_unit_test(a_freed_handle_is_refused_without_being_read),
        cmocka_unit_test(another_sessions_handle_is_refused),
        cmocka_unit_test(take_hands_back_every_object_once),
        cmocka_unit_test(find_returns_the_live_object_a_predicate_accepts),
        cmocka_unit_test(take_removes_only_what_the_predicate_accepts),
        cmocka_unit_test(clear_destroys_kernels_before_programs_before_memory),
        cmocka_unit_test(releasing_an_object_destroys_what_it_owns_first),
        cmocka_unit_test(a_pinned_block_is_found_by_its_live_host_address_only),
        cmocka_unit_test(check_refuses_a_stale_handle_in_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
