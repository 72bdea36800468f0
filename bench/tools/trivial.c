/* The floor of a process: start, exit. */
int main(void) { return 0; }
