/* The commented starter lesson printed by `attnstep --template`. */
#ifndef ATTNSTEP_TEMPLATE_H
#define ATTNSTEP_TEMPLATE_H

extern const char template_lesson[];

#endif
