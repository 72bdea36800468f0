/* gpuopt_tune_step's state, kept in the tuner between calls (online.c). */
#ifndef GPO_TUNE_ONLINE_H
#define GPO_TUNE_ONLINE_H

struct gpo_online;

/* Ends an online search (its journal stays unfinished, to resume). NULL
 * does nothing. */
void gpo_online_free(struct gpo_online *o);

#endif
