// Times ctm's benchmark kernels as GLSL fragment shaders on Mesa's
// software rasterisers (llvmpipe, softpipe), for `benches/llvmpipe/run.py`.
//
//   llvmpipe KERNEL FRAMES REFERENCE.f32
//
// KERNEL is one of chains8 chains4 chains2 chains1 mandelbrot tiny: the
// same work as benches/kernels/KERNEL.s (examples/mandelbrot.s), with the
// constants of `ctm bench suite`. The shader draws one triangle over the
// domain into a float32 RGBA framebuffer through EGL without a window;
// FRAMES frames are timed one by one (glFinish after each), after a first
// frame timed apart (Mesa compiles the shader on its first draw). The
// result is read back once and compared bit for bit with REFERENCE, ctm's
// output of the same job (float32_4, row j at j·W): every pixel must agree.
//
// Prints one JSON object: renderer, times in ms, and the pixels that differ.
// Which rasteriser and how many threads is Mesa's environment's choice
// (GALLIUM_DRIVER, LP_NUM_THREADS, LP_NATIVE_VECTOR_WIDTH).
#define GL_GLEXT_PROTOTYPES 1
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/glcorearb.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void fail(const char *what) {
  fprintf(stderr, "llvmpipe: %s\n", what);
  exit(1);
}

static double ms_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

// ------------------------------------------------------------ the shaders

// A bounded text buffer the shader is written into.
static char src[32768];
static size_t len;

static void put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void put(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(src + len, sizeof src - len, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof src - len) fail("shader text too long");
  len += (size_t)n;
}

// N independent chains of 64 / N MADs, as benches/kernels/chainsN.s: chain
// k starts as x·a[k] + b[k] in every channel (x the pixel's column), then
// runs r = r·c0 + c1; the chains are summed pairwise (r1 += r2, r3 += r4,
// …, then r1 += r3, …), and the sum is the output. GLSL's a * b + c is a
// rounded multiply and a rounded add, as ctm's MAD (the comparison with
// ctm's output checks that Mesa did not fuse them).
static void chains(int n) {
  put("#version 330 core\n"
      "uniform vec4 c0; uniform vec4 c1; uniform vec4 a[8]; uniform vec4 b[8];\n"
      "layout(location = 0) out vec4 o;\n"
      "void main() {\n"
      "  vec4 x = vec4(gl_FragCoord.x - 0.5);\n");
  for (int k = 1; k <= n; k++) put("  vec4 r%d = x * a[%d] + b[%d];\n", k, k - 1, k - 1);
  for (int round = 1; round < 64 / n; round++)
    for (int k = 1; k <= n; k++) put("  r%d = r%d * c0 + c1;\n", k, k);
  for (int step = 1; step < n; step *= 2)
    for (int k = 1; k + step <= n; k += 2 * step) put("  r%d = r%d + r%d;\n", k, k, k + step);
  put("  o = r1;\n}\n");
}

// examples/mandelbrot.s, step by step: c = (i, j)·c0 + c1; z = 0, n = 0;
// at most N times: leave when zx² + zy² − 4 ≥ 0, else z = (zx² + cx − zy²,
// 2·zx·zy + cy), n += 1; then o = (fract(n·c2.rgb), 1).
static void mandelbrot(void) {
  put("#version 330 core\n"
      "uniform vec4 c0; uniform vec4 c1; uniform vec4 c2; uniform int N;\n"
      "layout(location = 0) out vec4 o;\n"
      "void main() {\n"
      "  vec2 ij = gl_FragCoord.xy - 0.5;\n"
      "  vec2 c = ij * c0.xy + c1.xy;\n"
      "  float zx = 0.0, zy = 0.0, n = 0.0;\n"
      "  for (int k = 0; k < N; k++) {\n"
      "    float xx = zx * zx, yy = zy * zy, xy = zx * zy;\n"
      "    if ((xx + yy) - 4.0 >= 0.0) break;\n"
      "    float re = xx + c.x;\n"
      "    float im = xy * 2.0 + c.y;\n"
      "    zx = re - yy;\n"
      "    zy = im;\n"
      "    n = n + 1.0;\n"
      "  }\n"
      "  o = vec4(fract(n * c2.rgb), 1.0);\n"
      "}\n");
}

// benches/kernels/tiny.s: the output is r0 = (i, j, 0, 1).
static void tiny(void) {
  put("#version 330 core\n"
      "layout(location = 0) out vec4 o;\n"
      "void main() { o = vec4(gl_FragCoord.xy - 0.5, 0.0, 1.0); }\n");
}

static const char *VERTEX =
    "#version 330 core\n"
    "void main() {\n"
    "  // vertices 0, 1, 2 at (-1, -1), (3, -1), (-1, 3): one triangle over the viewport\n"
    "  gl_Position = vec4(gl_VertexID == 1 ? 3.0 : -1.0, gl_VertexID == 2 ? 3.0 : -1.0, 0.0, 1.0);\n"
    "}\n";

static GLuint shader(GLenum type, const char *text) {
  GLuint s = glCreateShader(type);
  glShaderSource(s, 1, &text, NULL);
  glCompileShader(s);
  GLint ok = 0;
  glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    static char log[4096];
    glGetShaderInfoLog(s, sizeof log, NULL, log);
    fprintf(stderr, "%s\n%s\n", text, log);
    fail("a shader did not compile");
  }
  return s;
}

static void uniform4(GLuint p, const char *name, float x, float y, float z, float w) {
  GLint at = glGetUniformLocation(p, name);
  if (at < 0) fail("a uniform the kernel needs is missing");
  glUniform4f(at, x, y, z, w);
}

// ------------------------------------------------------------------ main

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc != 4) fail("usage: llvmpipe KERNEL FRAMES REFERENCE.f32");
  const char *kernel = argv[1];
  int frames = atoi(argv[2]);
  if (frames < 1) fail("FRAMES must be at least 1");
  int w = 512, h = 512, chain_count = 0, mandel = 0;
  if (!strcmp(kernel, "chains8")) chain_count = 8;
  else if (!strcmp(kernel, "chains4")) chain_count = 4;
  else if (!strcmp(kernel, "chains2")) chain_count = 2;
  else if (!strcmp(kernel, "chains1")) chain_count = 1;
  else if (!strcmp(kernel, "mandelbrot")) mandel = 1, w = 768;
  else if (strcmp(kernel, "tiny")) fail("unknown kernel");

  // A context without a window (Mesa's surfaceless platform).
  PFNEGLGETPLATFORMDISPLAYEXTPROC platform_display =
      (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
  if (!platform_display) fail("EGL has no eglGetPlatformDisplayEXT");
  EGLDisplay dpy = platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
  if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, NULL, NULL)) fail("no surfaceless EGL display");
  if (!eglBindAPI(EGL_OPENGL_API)) fail("EGL has no desktop OpenGL");
  const EGLint config_attrs[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                                 EGL_NONE};
  EGLConfig config;
  EGLint configs = 0;
  if (!eglChooseConfig(dpy, config_attrs, &config, 1, &configs) || configs < 1) fail("no EGL config");
  const EGLint context_attrs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3,
                                  EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                  EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
  EGLContext ctx = eglCreateContext(dpy, config, EGL_NO_CONTEXT, context_attrs);
  if (ctx == EGL_NO_CONTEXT) fail("no OpenGL 3.3 core context");
  if (!eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) fail("cannot make the context current");

  // The framebuffer: one float32 RGBA texture of the domain's size.
  GLuint tex, fbo, vao;
  glGenTextures(1, &tex);
  glBindTexture(GL_TEXTURE_2D, tex);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA32F, w, h, 0, GL_RGBA, GL_FLOAT, NULL);
  glGenFramebuffers(1, &fbo);
  glBindFramebuffer(GL_FRAMEBUFFER, fbo);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, tex, 0);
  if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE) fail("incomplete framebuffer");
  glViewport(0, 0, w, h);
  glGenVertexArrays(1, &vao);
  glBindVertexArray(vao);

  // The kernel's shader and its constants (those of `ctm bench suite`).
  if (chain_count) chains(chain_count);
  else if (mandel) mandelbrot();
  else tiny();
  GLuint prog = glCreateProgram();
  glAttachShader(prog, shader(GL_VERTEX_SHADER, VERTEX));
  glAttachShader(prog, shader(GL_FRAGMENT_SHADER, src));
  glLinkProgram(prog);
  GLint linked = 0;
  glGetProgramiv(prog, GL_LINK_STATUS, &linked);
  if (!linked) fail("the program did not link");
  glUseProgram(prog);
  if (chain_count) {
    uniform4(prog, "c0", 0.999f, 0.998f, 0.997f, 0.996f);
    uniform4(prog, "c1", 0.001f, 0.002f, 0.003f, 0.004f);
    for (int k = 0; k < chain_count; k++) {
      char name[8];
      snprintf(name, sizeof name, "a[%d]", k);
      uniform4(prog, name, 0.001f, 0.001f, 0.001f, 0.001f);
      snprintf(name, sizeof name, "b[%d]", k);
      uniform4(prog, name, 0.001f, 0.002f, 0.003f, 0.004f);
    }
  } else if (mandel) {
    uniform4(prog, "c0", 0.00390625f, 0.0048828125f, 0.0f, 0.0f);
    uniform4(prog, "c1", -2.25f, -1.25f, 0.0f, 0.0f);
    uniform4(prog, "c2", 0.031f, 0.047f, 0.071f, 0.0f);
    GLint n = glGetUniformLocation(prog, "N");
    if (n < 0) fail("a uniform the kernel needs is missing");
    glUniform1i(n, 255);
  }

  // The first frame (Mesa compiles on its first draw), then the timed ones.
  double t = ms_now();
  glDrawArrays(GL_TRIANGLES, 0, 3);
  glFinish();
  double first = ms_now() - t;
  double *times = malloc(sizeof(double) * (size_t)frames);
  if (!times) fail("out of memory");
  for (int f = 0; f < frames; f++) {
    t = ms_now();
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glFinish();
    times[f] = ms_now() - t;
  }
  if (glGetError() != GL_NO_ERROR) fail("OpenGL reported an error");
  qsort(times, (size_t)frames, sizeof(double), by_value);

  // Every pixel against ctm's output, bit for bit.
  size_t words = (size_t)w * (size_t)h * 4;
  uint32_t *got = malloc(words * 4), *want = malloc(words * 4);
  if (!got || !want) fail("out of memory");
  glReadPixels(0, 0, w, h, GL_RGBA, GL_FLOAT, got);
  FILE *f = fopen(argv[3], "rb");
  if (!f) fail("cannot open the reference output");
  if (fread(want, 4, words, f) != words || fgetc(f) != EOF)
    fail("the reference output is not the domain's size (float32_4)");
  fclose(f);
  long differ = 0;
  for (size_t p = 0; p < words; p += 4)
    differ += memcmp(got + p, want + p, 16) != 0;

  printf("{\"kernel\": \"%s\", \"w\": %d, \"h\": %d, \"renderer\": \"%s\", \"first_ms\": %.3f, "
         "\"frames\": %d, \"min_ms\": %.3f, \"median_ms\": %.3f, \"pixels_differing\": %ld}\n",
         kernel, w, h, (const char *)glGetString(GL_RENDERER), first, frames, times[0],
         times[frames / 2], differ);
  return differ != 0;
}
