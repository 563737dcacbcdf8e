# The CUDA performance lab kit. `make help` lists what you can do.
#
# One Makefile for the whole kit. The labs are listed in common/labs.txt;
# each program is built by the same rules. Products go to build/.
#
# A lab's program is its harness (common/harness/NN-name.cu: data, timing,
# checks, report) linked with the student's file (labs/NN-name/name.cu) or
# the reference (solutions/NN-name/name.cu), which is compiled twice
# (common/harness/student.cu): as written, for timing, and with counting
# arrays, for the in-kernel counts.

LABS := $(shell grep -v '^[[:space:]]*\(\#\|$$\)' common/labs.txt)

NVCC ?= nvcc
NVCCFLAGS ?= -O3 -lineinfo
KIT_BUILD ?= build
BUILD := $(KIT_BUILD)
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# V=1 shows every command.
Q := $(if $(filter 1,$(V)),,@)

# ARCH: the GPU in this machine by default. Without a GPU, the oldest
# architecture the kit supports with this toolkit (nvcc 13 dropped 7.0).
# For several GPUs give a list, e.g.
#   make ARCH="-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90"
NVCC_MAJOR := $(shell $(NVCC) --version 2>/dev/null | sed -n 's/.*release \([0-9][0-9]*\)\..*/\1/p')
OLDEST_SM := $(if $(filter 1 2 3 4 5 6 7 8 9 10 11 12,$(NVCC_MAJOR)),70,75)
HAVE_GPU := $(shell nvidia-smi -L 2>/dev/null | grep -q '^GPU' && echo yes)
ifeq ($(origin ARCH),undefined)
  ifeq ($(HAVE_GPU),yes)
    ARCH := -arch=native
  else
    ARCH := -arch=sm_$(OLDEST_SM)
    ARCH_NOTE := no GPU here: building for sm_$(OLDEST_SM), the oldest architecture the kit supports with nvcc $(NVCC_MAJOR) (ARCH= chooses others)
  endif
endif

INCLUDES := -Icommon/lib -Icommon/harness
KIT_FLAGS = $(ARCH) $(NVCCFLAGS) $(INCLUDES) -Xcompiler -Wall,-Wextra
LIB_HEADERS := $(wildcard common/lib/*.h)
LEGACY_HEADERS := $(wildcard common/lib/legacy/*.h)

# Lab 01-coalescing: its name is coalescing, its file labs/01-coalescing/coalescing.cu.
name_of = $(patsubst $(firstword $(subst -, ,$(1)))-%,%,$(1))
# Labs with a harness in common/harness are built from it; the others
# (until they move) are whole programs in their own file.
HARNESSED := $(foreach lab,$(LABS),$(if $(wildcard common/harness/$(lab).cu),$(lab)))
LEGACY := $(filter-out $(HARNESSED),$(LABS))

PROGS := $(foreach lab,$(LABS),$(lab)/$(call name_of,$(lab)))
STUDENT := $(addprefix $(BUILD)/labs/,$(PROGS))
REFERENCE := $(addprefix $(BUILD)/solutions/,$(PROGS))
# Negative controls for the tests: tests/fixtures/labNN/NAME.sed, a sed
# script that breaks lab NN's reference one way, built like a student's file
# into build/tests/fixtures/labNN/NAME.
FIXTURES := $(patsubst tests/fixtures/%.sed,$(BUILD)/tests/fixtures/%,$(wildcard tests/fixtures/lab[0-9][0-9]/*.sed))
TOOLS := $(BUILD)/bin/kit-query $(BUILD)/tests/kit-unit $(BUILD)/tests/kit-query-sm75 $(FIXTURES)

# make run LAB=01 (or 1, 01-coalescing, coalescing); REF=1 runs the reference.
LAB ?=
REF ?=
ARGS ?=
lab_match = $(firstword $(foreach l,$(LABS),$(if $(filter $(1) $(1)-% 0$(1) 0$(1)-% %-$(1),$(l) $(firstword $(subst -, ,$(l)))),$(l))))
lab_dir = $(call lab_match,$(LAB))

.DELETE_ON_ERROR:
.SECONDEXPANSION:
.PHONY: all build labs solutions tools run demo test check grade-class query clean help need-nvcc

all: need-nvcc
	$(if $(ARCH_NOTE),@echo "$(ARCH_NOTE)")
	@$(MAKE) --no-print-directory -j$(JOBS) build

build: labs solutions tools
labs: $(STUDENT)
solutions: $(REFERENCE)
tools: $(TOOLS)

need-nvcc:
	@command -v $(firstword $(NVCC)) >/dev/null 2>&1 || { \
	    echo "nvcc not found: put the CUDA toolkit's bin folder on PATH (usually /usr/local/cuda/bin:" >&2; \
	    echo "  export PATH=/usr/local/cuda/bin:\$$PATH), or name it: make NVCC=/path/to/nvcc" >&2; exit 2; }

# --- a harnessed lab: harness object + the student's file built twice ------

$(BUILD)/harness/%.o: common/harness/%.cu common/harness/%.h $(LIB_HEADERS)
	@mkdir -p $(@D)
	@echo "  NVCC  $@"
	$(Q)$(NVCC) $(KIT_FLAGS) -c -o $@ $<

# $(1): 0 (as written) or 1 (counting); $(2): the lab; $(3): the source.
STUDENT_CC = $(NVCC) $(KIT_FLAGS) -I. -Xcompiler -Wno-unused-parameter -DKIT_COUNTED=$(1) \
	-DKIT_LAB_H='"$(2).h"' -DKIT_STUDENT_FILE='"$(if $(filter /%,$(3)),,./)$(3)"' -c -o $@ common/harness/student.cu

# build/labs/01-coalescing/timed.o from labs/01-coalescing/coalescing.cu
$(BUILD)/%/timed.o: $$*/$$(call name_of,$$(notdir $$*)).cu common/harness/student.cu \
		common/harness/$$(notdir $$*).h $(LIB_HEADERS)
	@mkdir -p $(@D)
	@echo "  NVCC  $@"
	$(Q)$(call STUDENT_CC,0,$(notdir $*),$<)

$(BUILD)/%/counted.o: $$*/$$(call name_of,$$(notdir $$*)).cu common/harness/student.cu \
		common/harness/$$(notdir $$*).h $(LIB_HEADERS)
	@mkdir -p $(@D)
	@echo "  NVCC  $@"
	$(Q)$(call STUDENT_CC,1,$(notdir $*),$<)

# $(1): labs or solutions; $(2): the lab.
define harnessed_program
$(BUILD)/$(1)/$(2)/$(call name_of,$(2)): $(BUILD)/harness/$(2).o $(BUILD)/$(1)/$(2)/timed.o $(BUILD)/$(1)/$(2)/counted.o
	@echo "  LINK  $$@"
	$(Q)$(NVCC) $(ARCH) -o $$@ $$^
endef
$(foreach lab,$(HARNESSED),$(foreach side,labs solutions,$(eval $(call harnessed_program,$(side),$(lab)))))

# --- test fixtures: a reference broken by a sed script --------------------------

# lab05/NAME -> 05-streams
fixture_lab = $(call lab_match,$(patsubst lab%,%,$(firstword $(subst /, ,$(1)))))
fixture_ref = solutions/$(call fixture_lab,$(1))/$(call name_of,$(call fixture_lab,$(1))).cu

$(BUILD)/tests/fixtures/%.cu: tests/fixtures/%.sed $$(call fixture_ref,$$*)
	@mkdir -p $(@D)
	$(Q)sed -f $< $(word 2,$^) >$@
	$(Q)! cmp -s $@ $(word 2,$^) || { echo "tests/fixtures/$*.sed no longer changes $(word 2,$^)" >&2; rm -f $@; exit 1; }

$(BUILD)/tests/fixtures/%.timed.o: $(BUILD)/tests/fixtures/%.cu common/harness/student.cu \
		common/harness/$$(call fixture_lab,$$*).h $(LIB_HEADERS)
	@echo "  NVCC  $@"
	$(Q)$(call STUDENT_CC,0,$(call fixture_lab,$*),$<)

$(BUILD)/tests/fixtures/%.counted.o: $(BUILD)/tests/fixtures/%.cu common/harness/student.cu \
		common/harness/$$(call fixture_lab,$$*).h $(LIB_HEADERS)
	@echo "  NVCC  $@"
	$(Q)$(call STUDENT_CC,1,$(call fixture_lab,$*),$<)

# Kept: compiler messages name them.
.SECONDARY: $(FIXTURES:%=%.cu)

$(FIXTURES): $(BUILD)/tests/fixtures/%: $(BUILD)/harness/$$(call fixture_lab,$$*).o \
		$(BUILD)/tests/fixtures/%.timed.o $(BUILD)/tests/fixtures/%.counted.o
	@echo "  LINK  $@"
	$(Q)$(NVCC) $(ARCH) -o $@ $^

# --- a lab not yet in the harness form: one whole program -------------------

define legacy_program
$(BUILD)/$(1)/$(2)/$(call name_of,$(2)): $(1)/$(2)/$(call name_of,$(2)).cu $(LIB_HEADERS) $(LEGACY_HEADERS)
	@mkdir -p $$(@D)
	@echo "  NVCC  $$@"
	$(Q)$(NVCC) $(ARCH) $(NVCCFLAGS) -Icommon/lib/legacy -Icommon/lib -Xcompiler -Wall,-Wextra -o $$@ $$<
endef
$(foreach lab,$(LEGACY),$(foreach side,labs solutions,$(eval $(call legacy_program,$(side),$(lab)))))

# --- tools --------------------------------------------------------------------

$(BUILD)/bin/kit-query: common/tools/query.cu $(LIB_HEADERS)
	@mkdir -p $(@D)
	@echo "  NVCC  $@"
	$(Q)$(NVCC) $(KIT_FLAGS) -o $@ $<

$(BUILD)/tests/kit-unit: tests/kit-unit.cu $(LIB_HEADERS)
	@mkdir -p $(@D)
	@echo "  NVCC  $@"
	$(Q)$(NVCC) $(KIT_FLAGS) -o $@ $<

# Built for Turing only, on purpose: the tests run it on newer GPUs to see
# the kit's message for a binary without code for the GPU present.
$(BUILD)/tests/kit-query-sm75: common/tools/query.cu $(LIB_HEADERS)
	@mkdir -p $(@D)
	@echo "  NVCC  $@"
	$(Q)$(NVCC) -gencode arch=compute_75,code=sm_75 $(NVCCFLAGS) $(INCLUDES) -o $@ $<

# --- using the kit -------------------------------------------------------------

run: need-nvcc
	@test -n "$(LAB)" || { echo "make run: name a lab, e.g. make run LAB=01 (labs: $(LABS))" >&2; exit 2; }
	@test -n "$(lab_dir)" || { echo "make run: there is no lab '$(LAB)'; the labs are $(LABS)" >&2; exit 2; }
	@$(MAKE) -s --no-print-directory $(BUILD)/$(if $(REF),solutions,labs)/$(lab_dir)/$(call name_of,$(lab_dir))
	$(BUILD)/$(if $(REF),solutions,labs)/$(lab_dir)/$(call name_of,$(lab_dir)) $(ARGS)

demo: all
	@bash common/tools/demo.sh $(LABS)

# The test tools first: a missing Bats is said at once, not after the build.
test:
	@bash tests/setup-bats.sh
	@$(MAKE) --no-print-directory all
	@bash tests/run.sh $(TESTS)

# Grading (common/grade/grade.sh, settings in common/grade/grading.conf). The
# compiler command goes along, so that graded programs build as the labs do.
GRADE_ENV = KIT_NVCC="$(NVCC)" KIT_ARCH="$(ARCH)" KIT_NVCC_FLAGS="$(NVCCFLAGS)" KIT_BUILD="$(BUILD)"
SEED ?=
SANITIZE ?=
REPORT ?=
SUBMISSIONS ?=
OUT ?=
SLURM ?=

comma := ,

# LAB=01 grades one lab, LAB=01,03 several.
check: all
	@$(GRADE_ENV) bash common/grade/grade.sh $(if $(SEED),--seed $(SEED)) $(if $(SANITIZE),--sanitize) \
		$(if $(REPORT),--report $(REPORT)) $(subst $(comma), ,$(LAB))

grade-class: all
	@$(GRADE_ENV) bash common/grade/grade-class.sh $(if $(SLURM),--slurm) $(if $(SANITIZE),--sanitize) \
		$(if $(SEED),--seed $(SEED)) $(if $(LAB),--labs $(LAB)) -- "$(SUBMISSIONS)" "$(OUT)"

query: $(BUILD)/bin/kit-query
	@$(BUILD)/bin/kit-query

clean:
	rm -rf $(BUILD)

help:
	@echo "The CUDA performance lab kit. Labs: $(LABS)"
	@echo ""
	@echo "  make              build every lab (your copy and the reference) and the tools"
	@echo "  make demo         run every reference on this GPU, beside the course's K40 figures"
	@echo "  make test         run the kit's own test suite (GPU tests skip without a GPU)"
	@echo "  make run LAB=01   build and run your copy of a lab; REF=1 runs the reference,"
	@echo "                    ARGS=\"--size 4M\" passes options (ARGS=--help lists them)"
	@echo "  make check        grade your labs/: PASS, FAIL or SKIP per lab, points; LAB=01 (or 01,03),"
	@echo "                    SEED= repeats a grading, SANITIZE=1 adds compute-sanitizer,"
	@echo "                    REPORT=dir writes report.txt, grades.csv, .tap and .xml"
	@echo "  make grade-class SUBMISSIONS=dir OUT=dir"
	@echo "                    grade a class: a folder or archive per student; LAB=, SLURM=1 (job array)"
	@echo "  make query        describe this GPU as the labs see it"
	@echo "  make clean        remove build/"
	@echo ""
	@echo "Variables: ARCH (default: this GPU; a gencode list also works), NVCC, NVCCFLAGS, V=1 (show"
	@echo "  commands), TESTS (bats files for make test), KIT_REQUIRE_GPU=1 (a missing GPU fails the tests)."
	@echo "Grading settings (points, speed factors, limits): common/grade/grading.conf"
