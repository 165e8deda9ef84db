// pleach's launcher of its own programs (node, bubblewrap) in a container of another image: the
// pleach sandbox image's files are mounted read-only at /opt/pleach-runtime there, and this static
// program (it loads nothing, so it needs no file of the image: no shell, no loader, no library)
// runs PROGRAM through that mount's own loader and libraries (LOADER, LIBRARY_PATH), never the
// image's. scripts/build-sandbox-image.sh compiles it once per program:
//
//   gcc -static -O2 -DLOADER='"..."' -DLIBRARY_PATH='"..."' -DPROGRAM='"..."' [-DSERVER]
//
//   launcher ARGUMENTS...                                                  (bubblewrap's)
//   launcher [--own FOLDER UID GID] [--setenv NAME VALUE]... -- ARGUMENTS...   (SERVER: node's)
//
// Bubblewrap's launcher passes its arguments and variables (the server's own) as they are. The
// server's (SERVER) gives PROGRAM only the variables its --setenv options name, none of the
// container's, which hold the image's (its LD_PRELOAD or NODE_OPTIONS would load the image's code
// into ours). --own, as root only: FOLDER's tree (never following a link, never crossing into
// another mount) is given to UID:GID, and the launcher then becomes that user, for good, before
// PROGRAM starts: so a workspace the image made as root is worked in by a user that is not root.
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef LOADER
#error "LOADER, the dynamic loader of the runtime, must be defined"
#endif
#ifndef LIBRARY_PATH
#error "LIBRARY_PATH, the library folders of the runtime, must be defined"
#endif
#ifndef PROGRAM
#error "PROGRAM, the program of the runtime to run, must be defined"
#endif

extern char **environ;

#ifdef SERVER
static uid_t owner_uid;
static gid_t owner_gid;

static int give(const char *path, const struct stat *info, int type, struct FTW *walk) {
  (void)info;
  (void)type;
  (void)walk;
  if (lchown(path, owner_uid, owner_gid) != 0) {
    fprintf(stderr, "pleach launcher: cannot give %s to %u:%u: %s\n", path, owner_uid, owner_gid,
            strerror(errno));
    return 1;
  }
  return 0;
}

static unsigned long number(const char *text, const char *what) {
  char *end = NULL;
  errno = 0;
  unsigned long value = strtoul(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') {
    fprintf(stderr, "pleach launcher: %s must be a number, got %s\n", what, text);
    exit(127);
  }
  return value;
}
#endif

int main(int argc, char **argv) {
  char **arguments = calloc((size_t)argc + 5, sizeof(char *));
  if (arguments == NULL) return 127;
  int next = 1;
#ifdef SERVER
  char **variables = calloc((size_t)argc + 1, sizeof(char *));
  if (variables == NULL) return 127;
  size_t count = 0;
  for (; next < argc; next++) {
    if (strcmp(argv[next], "--own") == 0 && next + 3 < argc) {
      owner_uid = (uid_t)number(argv[next + 2], "--own's uid");
      owner_gid = (gid_t)number(argv[next + 3], "--own's gid");
      if (owner_uid == 0) {
        fprintf(stderr, "pleach launcher: --own gives a folder to a user that is not root\n");
        return 127;
      }
      if (nftw(argv[next + 1], give, 64, FTW_PHYS | FTW_MOUNT) != 0) return 127;
      // Groups first, then the group, then the user: after setuid nothing else may change.
      if (setgroups(0, NULL) != 0 || setgid(owner_gid) != 0 || setuid(owner_uid) != 0 ||
          setuid(0) == 0) {
        fprintf(stderr, "pleach launcher: cannot become %u:%u\n", owner_uid, owner_gid);
        return 127;
      }
      next += 3;
    } else if (strcmp(argv[next], "--setenv") == 0 && next + 2 < argc) {
      size_t length = strlen(argv[next + 1]) + strlen(argv[next + 2]) + 2;
      char *pair = malloc(length);
      if (pair == NULL) return 127;
      snprintf(pair, length, "%s=%s", argv[next + 1], argv[next + 2]);
      variables[count++] = pair;
      next += 2;
    } else if (strcmp(argv[next], "--") == 0) {
      next += 1;
      break;
    } else {
      fprintf(stderr, "pleach launcher: unknown option %s (end the options with --)\n", argv[next]);
      return 127;
    }
  }
#endif
  size_t at = 0;
  arguments[at++] = LOADER;
  arguments[at++] = "--library-path";
  arguments[at++] = LIBRARY_PATH;
  arguments[at++] = PROGRAM;
  for (; next < argc; next++) arguments[at++] = argv[next];
#ifdef SERVER
  execve(LOADER, arguments, variables);
#else
  execve(LOADER, arguments, environ);
#endif
  fprintf(stderr, "pleach launcher: cannot run %s: %s\n", LOADER, strerror(errno));
  return 127;
}
