#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int n = atoi(argv[1]);
    setpgid(0, 0);
    pid_t me = getpid();
    for (int i = 0; i < n; i++) {
        pid_t p = fork();
        if (p == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != me) _exit(0);
            for (;;) pause();
        }
        if (p < 0) { perror("fork"); break; }
    }
    printf("spawned\n"); fflush(stdout);
    char c; while (read(0, &c, 1) > 0) {}
    signal(SIGTERM, SIG_IGN);
    kill(0, SIGTERM);
    kill(0, SIGKILL);
    return 0;
}
