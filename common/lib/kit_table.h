/*
 * kit_table.h - a lab's table, declared once: its rows (kit_row.h) and its
 * columns. A column is one figure of a row, with how the table for people
 * shows it, what the CSV calls it and, where it has one, its key: value
 * line. From that one declaration
 *
 *   kit_table_print   the table for people: a head, a line per row, each
 *                     row's check word (ok, WRONG, UNSTEADY) last;
 *   kit_table_csv     the CSV: gpu, size, seed, (part,) the first column,
 *                     every column the CSV names, then correct (1 or 0);
 *   kit_table_kv      every row's key: value lines (kit_row_kv), then each
 *                     column's own, KEY-pattern filled with the row's key.
 *
 * A column's value is NAN where the row has none (an untimed row has no
 * time): "-" in the table, 0 in the CSV, no key: value line. A column may
 * also say, for the table alone, when its figure means nothing (a kernel
 * without shared memory has no wavefronts): "-" there (or the table's
 * hidden text), the figure in the CSV and the key: value line.
 *
 * A table whose rows say more than a kit_row does (a label of their own,
 * a check of the lab's, rows the CSV leaves out) names that in the members
 * after ctx; left out (zero), each is the kit's own.
 */
#ifndef KIT_TABLE_H
#define KIT_TABLE_H

#include <math.h>
#include <stdio.h>
#include <string.h>

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
    int (*shown)(const kit_row *r, const void *ctx);    /* 0: the table shows its hidden text; NULL: always */
} kit_column;

typedef struct {
    const char *first;     /* the first column's head: "kernel"; the CSV names it the same */
    int first_width;       /* its width in the table */
    const kit_row *rows;
    int nrows;
    const kit_column *cols;
    int ncols;
    const void *ctx;       /* what the columns' values need: bytes moved, a baseline row */
    /* Optional: */
    void (*label)(const kit_row *r, const void *ctx, char *text, size_t size); /* first cell; NULL: the row's name */
    const char *(*check)(const kit_row *r, const void *ctx); /* check word; NULL: kit_row_check_word */
    int (*correct)(const kit_row *r, const void *ctx);       /* the CSV's correct; NULL: no element wrong */
    int (*in_csv)(const kit_row *r, const void *ctx);        /* has a CSV line; NULL: every row */
    const char *csv_first; /* the CSV's name of the first column; NULL: first */
    const char *hidden;    /* the table's cell where a column is not shown; NULL: "-" */
    int part;              /* > 0: a CSV column part, this table's number, before the first */
} kit_table;

static inline double kit_column_of(const kit_table *t, const kit_column *c, const kit_row *r)
{
    return c->value(r, t->ctx);
}

/* Columns' values every lab's tables have: the median time of a timed row
 * (NAN: not timed), segments and sectors per load request. */
static inline double kit_col_time(const kit_row *r, const void *) { return r->timed ? r->t.median_ms : NAN; }
static inline double kit_col_segments(const kit_row *r, const void *) { return kit_row_segments(r); }
static inline double kit_col_sectors(const kit_row *r, const void *) { return kit_row_sectors(r); }

/* The table's head line. */
static inline void kit_table_head(const kit_table *t)
{
    printf("%-*s", t->first_width, t->first);
    for (int j = 0; j < t->ncols; j++)
        if (t->cols[j].head)
            printf(" %*s", t->cols[j].width, t->cols[j].head);
    printf("  %s\n", "check");
}

/* Row r's first cell: its label, or its name. */
static inline const char *kit_table_label(const kit_table *t, const kit_row *r, char *text, size_t size)
{
    if (!t->label)
        return r->name;
    t->label(r, t->ctx, text, size);
    return text;
}

/* Row r's line in the table for people, under label (NULL: its own). */
static inline void kit_table_line(const kit_table *t, const kit_row *r, const char *label)
{
    char first[64];
    printf("%-*s", t->first_width, label ? label : kit_table_label(t, r, first, sizeof first));
    for (int j = 0; j < t->ncols; j++) {
        const kit_column *c = &t->cols[j];
        double v;
        char text[64];
        if (!c->head)
            continue;
        v = kit_column_of(t, c, r);
        if (isnan(v))
            snprintf(text, sizeof text, "-");
        else if (c->shown && !c->shown(r, t->ctx))
            snprintf(text, sizeof text, "%s", t->hidden ? t->hidden : "-");
        else
            snprintf(text, sizeof text, "%.*f%s", c->decimals, v, c->unit ? c->unit : "");
        printf(" %*s", c->width, text);
    }
    printf("  %s\n", t->check ? t->check(r, t->ctx) : kit_row_check_word(r));
}

/* The table for people: the head, then a line per row. */
static inline void kit_table_print(const kit_table *t)
{
    kit_table_head(t);
    for (int i = 0; i < t->nrows; i++)
        kit_table_line(t, &t->rows[i], NULL);
}

/* The CSV's head line. */
static inline void kit_table_csv_head(FILE *f, const kit_table *t)
{
    fprintf(f, "gpu,size,seed,%s%s", t->part > 0 ? "part," : "", t->csv_first ? t->csv_first : t->first);
    for (int j = 0; j < t->ncols; j++)
        if (t->cols[j].csv)
            fprintf(f, ",%s", t->cols[j].csv);
    fprintf(f, ",correct\n");
}

/* A CSV cell of text: quoted where it holds a comma, a quote or a line
 * break, its quotes doubled (RFC 4180). */
static inline void kit_csv_text(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* The table's rows as CSV lines, size being the row's problem size; with
 * head, the head line first (a second table in the same file leaves it). */
static inline void kit_table_csv(FILE *f, const kit_table *t, const kit_device *d, unsigned long long size,
                                 unsigned long long seed, int head)
{
    char first[64];
    if (!f)
        return;
    if (head)
        kit_table_csv_head(f, t);
    for (int i = 0; i < t->nrows; i++) {
        const kit_row *r = &t->rows[i];
        if (t->in_csv && !t->in_csv(r, t->ctx))
            continue;
        kit_csv_prefix(f, d, size, seed);
        if (t->part > 0)
            fprintf(f, "%d,", t->part);
        kit_csv_text(f, kit_table_label(t, r, first, sizeof first));
        for (int j = 0; j < t->ncols; j++) {
            const kit_column *c = &t->cols[j];
            double v;
            if (!c->csv)
                continue;
            v = kit_column_of(t, c, r);
            fprintf(f, ",%.*f", c->csv_decimals, isnan(v) ? 0.0 : v);
        }
        fprintf(f, ",%d\n", t->correct ? t->correct(r, t->ctx) : r->wrong == 0);
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
