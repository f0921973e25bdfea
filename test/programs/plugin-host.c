/* Loads a module with dlopen, as a plugin loader or an interpreter loads an
 * extension (e2e: test/e2e/shared-objects.test.ts); calls it through dlsym.
 * With no argument it calls the module's functions linked at build time. */
#include <dlfcn.h>
#include <stdio.h>

char *plugin_make(int n);
void plugin_keep(int n);
void plugin_drop(char *p);

struct plugin {
  char *(*make)(int);
  void (*keep)(int);
  void (*drop)(char *);
};

static int load(const char *path, struct plugin *api)
{
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 0;
  }
  api->make = (char *(*)(int))dlsym(h, "plugin_make");
  api->keep = (void (*)(int))dlsym(h, "plugin_keep");
  api->drop = (void (*)(char *))dlsym(h, "plugin_drop");
  return api->make && api->keep && api->drop;
}

int main(int argc, char **argv)
{
  struct plugin api = {0, 0, 0};
  if (argc > 1 && !load(argv[1], &api)) return 1;
#ifdef LINKED
  if (argc == 1) api = (struct plugin){plugin_make, plugin_keep, plugin_drop};
#endif
  if (!api.make) return 2;
  char *s = api.make(10);
  printf("%s\n", s);
  api.drop(s);
  api.keep(100);
  return 0;
}
