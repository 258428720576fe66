/* A sandbox host's `skupper`, `podman`, `systemctl`, `loginctl`, `curl` or `journalctl`: the tool named by
 * argv[0], run by the world's command server (skupper_sandbox/commands/server.py) with this
 * process's arguments, environment, working directory and standard streams, so that it costs
 * what a real binary costs to start. This process stands for the command: it exits with the
 * command's status, dies of the command's signal, forwards the signals it receives, and its
 * death (SIGKILL included) ends the command. Without a server it execs the Python emulation.
 *
 * Built by `sandbox up` with -DSKMCP_PYTHON="<the world's python>"; the server's abstract
 * socket is named after the world (SKMCP_SANDBOX_ID in every host's environment).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

extern char **environ;

static int server = -1;

static void forward(int sig) {
    int32_t number = sig;
    ssize_t ignored = write(server, &number, sizeof number);
    (void)ignored;
}

static int fallback(const char *tool, int argc, char **argv) {
    char module[128];
    /* conmon is podman's monitor and lives in its package (shims.fallback_module) */
    const char *package = strcmp(tool, "conmon") == 0 ? "emulated.podman" : "emulated";
    snprintf(module, sizeof module, "skupper_sandbox.%s.%s", package, tool);
    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (!args) return 127;
    args[0] = SKMCP_PYTHON;
    args[1] = "-m";
    args[2] = module;
    for (int i = 1; i < argc; i++) args[i + 2] = argv[i];
    execv(SKMCP_PYTHON, args);
    fprintf(stderr, "%s: cannot run %s: %s\n", tool, SKMCP_PYTHON, strerror(errno));
    return 127;
}

static int connect_server(void) {
    const char *world = getenv("SKMCP_SANDBOX_ID");
    if (!world || !*world) return -1;
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    char name[sizeof address.sun_path];
    int length = snprintf(name, sizeof name, "skmcp-commands-%s", world);
    if (length <= 0 || (size_t)length + 1 > sizeof address.sun_path) return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    memcpy(address.sun_path + 1, name, (size_t)length); /* abstract: no file, no path limit */
    socklen_t size = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)length);
    if (connect(fd, (struct sockaddr *)&address, size) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int append(char **buffer, size_t *used, size_t *room, const char *text) {
    size_t length = strlen(text) + 1;
    while (*used + length > *room) {
        *room *= 2;
        char *grown = realloc(*buffer, *room);
        if (!grown) return -1;
        *buffer = grown;
    }
    memcpy(*buffer + *used, text, length);
    *used += length;
    return 0;
}

static int write_all(int fd, const char *data, size_t length) {
    while (length > 0) {
        ssize_t sent = write(fd, data, length);
        if (sent < 0 && errno == EINTR) continue;
        if (sent <= 0) return -1;
        data += sent;
        length -= (size_t)sent;
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *tool = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    /* A closed standard stream cannot be passed on: give the command /dev/null instead. */
    for (int fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) < 0) {
            int null = open("/dev/null", O_RDWR);
            if (null >= 0 && null != fd) {
                dup2(null, fd);
                close(null);
            }
        }
    server = connect_server();
    if (server < 0) return fallback(tool, argc, argv);

    /* tool, cwd, argc, args..., environment... : NUL-terminated strings */
    size_t used = 0, room = 8192;
    char *request = malloc(room);
    char cwd[PATH_MAX], count[16];
    if (!getcwd(cwd, sizeof cwd)) strcpy(cwd, "/");
    snprintf(count, sizeof count, "%d", argc - 1);
    int failed = !request || append(&request, &used, &room, tool) ||
                 append(&request, &used, &room, cwd) || append(&request, &used, &room, count);
    for (int i = 1; !failed && i < argc; i++) failed = append(&request, &used, &room, argv[i]);
    for (char **env = environ; !failed && *env; env++) failed = append(&request, &used, &room, *env);
    if (failed) return fallback(tool, argc, argv);

    uint32_t length = (uint32_t)used;
    int fds[3] = {0, 1, 2};
    char control[CMSG_SPACE(sizeof fds)];
    memset(control, 0, sizeof control);
    struct iovec header = {.iov_base = &length, .iov_len = sizeof length};
    struct msghdr message = {
        .msg_iov = &header, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
    struct cmsghdr *rights = CMSG_FIRSTHDR(&message);
    rights->cmsg_level = SOL_SOCKET;
    rights->cmsg_type = SCM_RIGHTS;
    rights->cmsg_len = CMSG_LEN(sizeof fds);
    memcpy(CMSG_DATA(rights), fds, sizeof fds);
    if (sendmsg(server, &message, 0) != (ssize_t)sizeof length ||
        write_all(server, request, used) < 0) {
        close(server);
        return fallback(tool, argc, argv);
    }
    free(request);

    struct sigaction on_signal = {.sa_handler = forward, .sa_flags = SA_RESTART};
    sigemptyset(&on_signal.sa_mask);
    int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
    for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++)
        sigaction(forwarded[i], &on_signal, NULL);

    int32_t status[2]; /* {0, exit code} or {1, signal number} */
    size_t got = 0;
    while (got < sizeof status) {
        ssize_t n = read(server, (char *)status + got, sizeof status - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            fprintf(stderr, "%s: the sandbox's command server went away\n", tool);
            return 125;
        }
        got += (size_t)n;
    }
    if (status[0] == 1) {
        signal(status[1], SIG_DFL);
        sigset_t all;
        sigfillset(&all);
        sigprocmask(SIG_UNBLOCK, &all, NULL);
        raise(status[1]);
        return 128 + status[1];
    }
    return status[1];
}
