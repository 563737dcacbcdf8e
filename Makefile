# The CUDA performance lab kit. `make help` lists what you can do.
#
# One Makefile for the whole kit. The labs are listed in common/labs.txt;
# each program is built by the same rules. Products go to build/.
#
# A lab's program is its harness (common/harness/NN-name.cu: data, timing,
# checks, report; and any parts common/harness/NN-name-PART.cu, each with
# flags of its own) linked with the student's file (labs/NN-name/name.cu) or
# the reference (solutions/NN-name/name.cu), which is compiled twice
# (common/harness/student.cu): as written, for timing, and with counting
# arrays, for the in-kernel counts.

LABS := $(shell grep -v '^[[:space:]]*\(\#\|$$\)' common/labs.txt)

NVCC ?= nvcc
NVCCFLAGS ?= -O3 -lineinfo
KIT_BUILD ?= build
BUILD := $(KIT_BUILD)
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# $(call yes,$(FLAG)): FLAG=1 turns a switch on; empty, 0 or no leave it off.
yes = $(filter-out 0 no,$(1))
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

# Lab 01-coalescing: its name is coalescing, its file labs/01-coalescing/coalescing.cu.
name_of = $(patsubst $(firstword $(subst -, ,$(1)))-%,%,$(1))
HARNESSED := $(LABS)

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
.PHONY: all build labs solutions tools run sanitize profile demo test check grade-class query clean help \
	need-nvcc need-lab

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

# A lab's harness is common/harness/NN-name.cu, and any further parts
# common/harness/NN-name-PART.cu (e.g. the same kernels built with other
# flags). Each is an object of its own; a part's extra nvcc flags, if it
# needs any, are on a line of its own header comment:
#     kit-nvcc-flags: --use_fast_math
harness_objects = $(patsubst common/harness/%.cu,$(BUILD)/harness/%.o,\
	$(wildcard common/harness/$(1).cu common/harness/$(1)-*.cu))
object_flags = $(shell sed -n 's/^.*kit-nvcc-flags:[[:space:]]*//p' $(1))

define harness_rules
$(call harness_objects,$(1)): $(BUILD)/harness/%.o: common/harness/%.cu \
		$(wildcard common/harness/$(1).h common/harness/$(1)-*.h) $(LIB_HEADERS)
	@mkdir -p $$(@D)
	@echo "  NVCC  $$@"
	$(Q)$(NVCC) $(KIT_FLAGS) $$(call object_flags,$$<) -c -o $$@ $$<
endef
$(foreach lab,$(HARNESSED),$(eval $(call harness_rules,$(lab))))

# A lab's contract may give its counting build flags of its own, on a line
#     kit-counted-nvcc-flags: -G
# (Lab 03: without optimisation the counting build keeps each load and store
# in the branch the source puts it in, so it counts the lanes of each body.)
counted_flags = $(shell sed -n 's/^.*kit-counted-nvcc-flags:[[:space:]]*//p' common/harness/$(1).h)

# $(1): 0 (as written) or 1 (counting); $(2): the lab; $(3): the source.
student_flags = $(if $(filter 1,$(1)),$(call counted_flags,$(2)))
STUDENT_CC = $(NVCC) $(ARCH) $(if $(filter -G,$(call student_flags,$(1),$(2))),$(filter-out -lineinfo,$(NVCCFLAGS)),$(NVCCFLAGS)) \
	$(call student_flags,$(1),$(2)) $(INCLUDES) -Xcompiler -Wall,-Wextra \
	-I. -Xcompiler -Wno-unused-parameter -DKIT_COUNTED=$(1) \
	-DKIT_LAB_H='"$(2).h"' -DKIT_STUDENT_FILE='"$(if $(filter /%,$(3)),$(3),./$(3))"' \
	-c -o $@ common/harness/student.cu

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
$(BUILD)/$(1)/$(2)/$(call name_of,$(2)): $(call harness_objects,$(2)) $(BUILD)/$(1)/$(2)/timed.o $(BUILD)/$(1)/$(2)/counted.o
	@echo "  LINK  $$@"
	$(Q)$(NVCC) $(ARCH) -o $$@ $$^
endef
$(foreach lab,$(HARNESSED),$(foreach side,labs solutions,$(eval $(call harnessed_program,$(side),$(lab)))))

# --- grading: one program from a student's file anywhere --------------------
# common/grade/grade.sh builds each graded program with these rules, inside
# its sandbox, so that a graded lab is compiled exactly as `make` compiles it:
#   make graded-objects GRADED_LAB=01-coalescing STUDENT_SRC=/abs/coalescing.cu GRADED_DIR=/abs/dir
#       GRADED_DIR/timed.o and counted.o, nvcc's intermediate files (the PTX
#       the grader checks) in GRADED_DIR/keep-timed and keep-counted;
#   make graded ...   the same, linked with the kit's harness: GRADED_DIR/coalescing.
# Neither builds the harness: `make solutions` has (it is read-only there).
GRADED_LAB ?=
STUDENT_SRC ?=
GRADED_DIR ?= $(BUILD)/graded
.PHONY: graded graded-objects print-arch
# The PTX's line information names the student's lines (it changes no code).
GRADED_FLAGS = $(if $(filter -lineinfo -G,$(NVCCFLAGS)),,-lineinfo) --keep --keep-dir $(@D)/keep-$(basename $(@F))
ifneq ($(STUDENT_SRC),)
graded: $(GRADED_DIR)/$(call name_of,$(GRADED_LAB))
graded-objects: $(GRADED_DIR)/timed.o $(GRADED_DIR)/counted.o
$(GRADED_DIR)/timed.o $(GRADED_DIR)/counted.o: $(STUDENT_SRC) common/harness/student.cu \
		common/harness/$(GRADED_LAB).h $(LIB_HEADERS)
	@mkdir -p $(@D)/keep-$(basename $(@F))
	$(Q)$(call STUDENT_CC,$(if $(filter %counted.o,$@),1,0),$(GRADED_LAB),$(STUDENT_SRC)) $(GRADED_FLAGS)
$(GRADED_DIR)/$(call name_of,$(GRADED_LAB)): $(GRADED_DIR)/timed.o $(GRADED_DIR)/counted.o
	$(Q)$(NVCC) $(ARCH) -o $@ $(call harness_objects,$(GRADED_LAB)) $^
else
graded graded-objects:
	@echo "make $@: give GRADED_LAB, STUDENT_SRC and GRADED_DIR" >&2; exit 64
endif

# The ARCH a build here uses (the grader passes it into its sandbox).
print-arch:
	@echo '$(ARCH)'

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

$(FIXTURES): $(BUILD)/tests/fixtures/%: $$(call harness_objects,$$(call fixture_lab,$$*)) \
		$(BUILD)/tests/fixtures/%.timed.o $(BUILD)/tests/fixtures/%.counted.o
	@echo "  LINK  $@"
	$(Q)$(NVCC) $(ARCH) -o $@ $^

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

need-lab: need-nvcc
	@test -n "$(LAB)" || { echo "make $(MAKECMDGOALS): name a lab, e.g. make $(MAKECMDGOALS) LAB=01 (labs: $(LABS))" >&2; exit 2; }
	@test -n "$(lab_dir)" || { echo "make $(MAKECMDGOALS): there is no lab '$(LAB)'; the labs are $(LABS)" >&2; exit 2; }
	@$(MAKE) -s --no-print-directory $(PROGRAM)

# The program of LAB: the student's copy, or the reference with REF=1.
PROGRAM = $(BUILD)/$(if $(call yes,$(REF)),solutions,labs)/$(lab_dir)/$(call name_of,$(lab_dir))
# Without ARGS, sanitize and profile run the lab's small, quick case.
QUICK_ARGS = $(or $(ARGS),$(shell bash common/tools/lab-args.sh $(lab_dir) sanitize-args))

run: need-lab
	$(PROGRAM) $(ARGS)

# make sanitize LAB=01 [TOOL=memcheck|racecheck|initcheck|synccheck]
sanitize: need-lab
	@command -v compute-sanitizer >/dev/null 2>&1 || { echo "compute-sanitizer not found: it comes with the CUDA toolkit, in the same bin folder as nvcc" >&2; exit 2; }
	compute-sanitizer --tool $(or $(TOOL),memcheck) --error-exitcode 99 $(PROGRAM) $(QUICK_ARGS)

# make profile LAB=01 [TOOL=ncu|nsys]: the kernels as timed (the counting
# build's copies, kit_counted::..., are left out), or a timeline in build/profile/.
profile: need-lab
	@command -v $(or $(TOOL),ncu) >/dev/null 2>&1 || { echo "$(or $(TOOL),ncu) not found: Nsight Compute (ncu) and Nsight Systems (nsys) come with the CUDA toolkit or from NVIDIA's developer site" >&2; exit 2; }
	@mkdir -p $(BUILD)/profile
ifeq ($(or $(TOOL),ncu),nsys)
	nsys profile --trace=cuda,nvtx --force-overwrite true -o $(BUILD)/profile/$(lab_dir) $(PROGRAM) $(QUICK_ARGS)
	nsys stats --report cuda_gpu_kern_sum $(BUILD)/profile/$(lab_dir).nsys-rep
else
	ncu --clock-control none --kernel-name-base demangled -k regex:'kit_timed::' -c 40 $(PROGRAM) $(QUICK_ARGS)
endif

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
ROSTER ?=
NO_SANDBOX ?=

comma := ,

# LAB=01 grades one lab, LAB=01,03 several.
check: need-nvcc
	@$(MAKE) --no-print-directory -j$(JOBS) solutions tools
	@$(GRADE_ENV) bash common/grade/grade.sh $(if $(SEED),--seed $(SEED)) $(if $(call yes,$(SANITIZE)),--sanitize) $(if $(call yes,$(NO_SANDBOX)),--no-sandbox) \
		$(if $(REPORT),--report $(REPORT)) $(subst $(comma), ,$(LAB))

grade-class: need-nvcc
	@$(MAKE) --no-print-directory -j$(JOBS) solutions tools
	@$(GRADE_ENV) bash common/grade/grade-class.sh $(if $(call yes,$(SLURM)),--slurm) $(if $(call yes,$(SANITIZE)),--sanitize) \
		$(if $(call yes,$(NO_SANDBOX)),--no-sandbox) $(if $(ROSTER),--roster "$(ROSTER)") $(if $(ASSIGNMENT),--assignment "$(ASSIGNMENT)") \
		$(if $(filter command line environment override,$(origin ARCH)),--arch "$(ARCH)") \
		$(if $(SLURM_PARTITION),--slurm-partition "$(SLURM_PARTITION)") $(if $(SLURM_ACCOUNT),--slurm-account "$(SLURM_ACCOUNT)") \
		$(if $(SLURM_GRES),--slurm-gres "$(SLURM_GRES)") $(if $(SLURM_CPUS),--slurm-cpus "$(SLURM_CPUS)") \
		$(if $(SLURM_MEM),--slurm-mem "$(SLURM_MEM)") $(if $(SLURM_THROTTLE),--slurm-throttle "$(SLURM_THROTTLE)") \
		$(foreach o,$(SLURM_OPTIONS),--slurm-option "$(o)") \
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
	@echo "                    REPORT=dir writes report.txt, grades.csv, .tap, .xml (JUnit), results.json"
	@echo "  make grade-class SUBMISSIONS=dir OUT=dir"
	@echo "                    grade a class: a folder or archive per student; LAB=, ROSTER=file, SLURM=1"
	@echo "  make sanitize LAB=01   run it under compute-sanitizer (TOOL=memcheck|racecheck|initcheck|synccheck)"
	@echo "  make profile LAB=01    profile its kernels with ncu (TOOL=nsys: a timeline); plots:"
	@echo "                    bash common/tools/plot.sh table.csv (from ARGS=\"--csv table.csv\")"
	@echo "  make query        describe this GPU as the labs see it"
	@echo "  make clean        remove build/"
	@echo ""
	@echo "Variables: ARCH (default: this GPU; a gencode list also works), NVCC, NVCCFLAGS, V=1 (show"
	@echo "  commands), TESTS (bats files for make test), KIT_REQUIRE_GPU=1 (a missing GPU fails the tests; =2: a missing second GPU too)."
	@echo "Grading settings (points, speed factors, limits): common/grade/grading.conf"
