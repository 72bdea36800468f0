/* The measurement worker's side (serve.c): a process the library spawns
 * (remote.h) to run one device session's runtime calls, so that a kernel
 * that faults takes down this process and not the program that tunes. */
#ifndef GPO_ISOLATE_SERVE_H
#define GPO_ISOLATE_SERVE_H

/* Answers requests on the connected socket `fd` (wire.h) until CLOSE or
 * the end of the stream: the HELLO opens the named device's session in a
 * context of its own; every later request is one runtime call on it.
 * Returns the process's exit status: 0 after CLOSE or end of stream, 1
 * when the stream broke or was not this protocol. */
int gpo_worker_serve(int fd);

#endif
