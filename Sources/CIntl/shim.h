// glibc's gettext for Swift: the Glibc module Swift imports leaves out
// <libintl.h>, so gettext, ngettext and bindtextdomain are reached through
// this header. They live in libc itself: nothing to link.
#ifndef LIFELINE_CINTL_SHIM_H
#define LIFELINE_CINTL_SHIM_H

#include <libintl.h>
#include <locale.h>

#endif
