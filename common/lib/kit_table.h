/*
 * kit_table.h - a lab's table, declared once: its rows (kit_row.h) and its
 * columns. A column is one figure of a row, with how the table for people
 * shows it, what the CSV calls it and, where it has one, its key: value
 * line. From that one declaration
 *
 *   kit_table_print   the table for people: a head, a line per row, each
 *                     row's check word (ok, WRONG, UNSTEADY) last;
 *   kit_table_csv     the CSV: gpu, size, seed, the first column, every
 *                     column the CSV names, then correct (1 or 0);
 *   kit_table_kv      every row's key: value lines (kit_row_kv), then each
 *                     column's own, KEY-pattern filled with the row's key.
 *
 * A column's value is NAN where the row has none (an untimed row has no
 * time): "-" in the table, 0 in the CSV, no key: value line. A column may
 * also say, for the table alone, when its figure means nothing (a kernel
 * without shared memory has no wavefronts): "-" there, the figure in the
 * CSV and the key: value line.
 */
#ifndef KIT_TABLE_H
#define KIT_TABLE_H

#include <math.h>
#include <stdio.h>

#include "kit_device.h"
#include "kit_report.h"
#include "kit_row.h"

typedef struct {
    const char *head;  /* in the table: "time (ms)"; NULL: not in the table */
    int width;         /* its width there, unit included */
    int decimals;      /* digits after the point there */
    const char *unit;  /* after the figure there: "x", "%", "" */
    const char *csv;   /* in the CSV: "time_ms"; NULL: not in the CSV */
    int csv_decimals;  /* digits after the point there */
    const char *kv;    /* its key: value line, "bandwidth-%s-gbs" with the row's key; NULL: none */
    int kv_decimals;   /* digits after the point there */
    double (*value)(const kit_row *r, const void *ctx); /* NAN: none */
    int (*shown)(const kit_row *r, const void *ctx);    /* the table's "-" where 0; NULL: always */
} kit_column;

typedef struct {
    const char *first;     /* the first column's head: "kernel"; the CSV names it the same */
    int first_width;       /* its width in the table */
    const kit_row *rows;
    int nrows;
    const kit_column *cols;
    int ncols;
    const void *ctx;       /* what the columns' values need: bytes moved, a baseline row */
} kit_table;

static inline double kit_column_of(const kit_table *t, const kit_column *c, const kit_row *r)
{
    return c->value(r, t->ctx);
}

/* The table's head line. */
static inline void kit_table_head(const kit_table *t)
{
    printf("%-*s", t->first_width, t->first);
    for (int j = 0; j < t->ncols; j++)
        if (t->cols[j].head)
            printf(" %*s", t->cols[j].width, t->cols[j].head);
    printf("  %s\n", "check");
}

/* The table for people: the head, then a line per row. */
static inline void kit_table_print(const kit_table *t)
{
    kit_table_head(t);
    for (int i = 0; i < t->nrows; i++) {
        const kit_row *r = &t->rows[i];
        printf("%-*s", t->first_width, r->name);
        for (int j = 0; j < t->ncols; j++) {
            const kit_column *c = &t->cols[j];
            double v;
            char text[64];
            if (!c->head)
                continue;
            v = kit_column_of(t, c, r);
            if (isnan(v) || (c->shown && !c->shown(r, t->ctx)))
                snprintf(text, sizeof text, "-");
            else
                snprintf(text, sizeof text, "%.*f%s", c->decimals, v, c->unit ? c->unit : "");
            printf(" %*s", c->width, text);
        }
        printf("  %s\n", kit_row_check_word(r));
    }
}

/* The CSV's head line. */
static inline void kit_table_csv_head(FILE *f, const kit_table *t)
{
    fprintf(f, "gpu,size,seed,%s", t->first);
    for (int j = 0; j < t->ncols; j++)
        if (t->cols[j].csv)
            fprintf(f, ",%s", t->cols[j].csv);
    fprintf(f, ",correct\n");
}

/* The table's rows as CSV lines, size being the row's problem size; with
 * head, the head line first (a second table in the same file leaves it). */
static inline void kit_table_csv(FILE *f, const kit_table *t, const kit_device *d, unsigned long long size,
                                 unsigned long long seed, int head)
{
    if (!f)
        return;
    if (head)
        kit_table_csv_head(f, t);
    for (int i = 0; i < t->nrows; i++) {
        const kit_row *r = &t->rows[i];
        kit_csv_prefix(f, d, size, seed);
        fprintf(f, "%s", r->name);
        for (int j = 0; j < t->ncols; j++) {
            const kit_column *c = &t->cols[j];
            double v;
            if (!c->csv)
                continue;
            v = kit_column_of(t, c, r);
            fprintf(f, ",%.*f", c->csv_decimals, isnan(v) ? 0.0 : v);
        }
        fprintf(f, ",%d\n", r->wrong == 0);
    }
}

/* Every row's key: value lines, then each column's own. */
static inline void kit_table_kv(const kit_table *t)
{
    char key[96];
    for (int i = 0; i < t->nrows; i++) {
        const kit_row *r = &t->rows[i];
        kit_row_kv(r);
        for (int j = 0; j < t->ncols; j++) {
            const kit_column *c = &t->cols[j];
            double v;
            if (!c->kv)
                continue;
            v = kit_column_of(t, c, r);
            if (isnan(v))
                continue;
            snprintf(key, sizeof key, c->kv, r->key);
            kit_kv(key, "%.*f", c->kv_decimals, v);
        }
    }
}

#endif /* KIT_TABLE_H */
