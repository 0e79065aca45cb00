#include "listen.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"

int listen_split_addr(const char *addr, char *host, size_t host_size, char *port, size_t port_size)
{
    const char *colon = strrchr(addr, ':');
    if (colon == NULL || colon[1] == '\0' || strlen(colon + 1) >= port_size)
        return -1;
    const char *h = addr;
    size_t hlen = (size_t)(colon - addr);
    if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') {
        h++;
        hlen -= 2;
    } else if (memchr(h, ':', hlen) != NULL) {
        return -1; /* a bare IPv6 address needs brackets */
    }
    if (hlen >= host_size)
        return -1;
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    snprintf(port, port_size, "%s", colon + 1);
    return 0;
}

int listen_tcp(const char *addr, const char *flag)
{
    char host[256], port[16];
    struct addrinfo hints, *res = NULL;
    int fd = -1, on = 1, off = 0;

    if (listen_split_addr(addr, host, sizeof(host), port, sizeof(port)) != 0) {
        log_errorf("%s %s: want HOST:PORT, :PORT or [IPv6]:PORT", flag, addr);
        return -1;
    }
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int gai = getaddrinfo(host[0] != '\0' ? host : NULL, port, &hints, &res);
    if (gai != 0) {
        log_errorf("%s %s: %s", flag, addr, gai_strerror(gai));
        return -1;
    }
    /* For all interfaces prefer one dual-stack IPv6 socket, else IPv4. */
    for (int pass = 0; pass < 2 && fd < 0; pass++) {
        for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
            if (host[0] == '\0' && (pass == 0) != (ai->ai_family == AF_INET6))
                continue;
            if (host[0] != '\0' && pass == 1)
                break;
            fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
            if (fd < 0)
                continue;
            if (ai->ai_family == AF_INET6 && host[0] == '\0')
                setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
            if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
                listen(fd, SOMAXCONN) != 0) {
                log_errorf("%s %s: %s", flag, addr, strerror(errno));
                close(fd);
                fd = -1;
            }
        }
    }
    freeaddrinfo(res);
    return fd;
}
