/* A profile as a self-contained SVG picture (svg.c): a timeline with one
 * lane per thread (and per device track) where each section is a box with
 * its name, then the summary as bars, one per section with its numbers.
 * No script, stylesheet, font or image from elsewhere: it opens in any
 * browser or viewer as it is. */
#ifndef GPO_PROF_SVG_H
#define GPO_PROF_SVG_H

#include "snapshot.h"

/* Boxes the timeline draws (about: ties with the narrowest drawn are drawn
 * too); the narrowest are left out first, and the picture says how many. */
#define GPO_PROF_SVG_MAX_BOXES 20000

/* The picture, malloc'd; NULL with the detail set when out of memory. */
char *gpo_prof_svg(const gpo_prof_snapshot *s);

#endif
