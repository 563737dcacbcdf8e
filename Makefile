# The CUDA performance lab kit. `make help` lists what you can do.
#
# One Makefile for the whole kit. The labs are the folders common/lab/NN-name,
# in the order of their numbers; each program is built by the same rules.
# Products go to build/.
#
# A lab's program is its harness (common/lab/NN-name/harness.cu: data,
# timing, checks, report; and any parts common/lab/NN-name/harness-PART.cu,
# each with flags of its own) linked with the student's file
# (labs/NN-name/name.cu) or the reference (solutions/NN-name/name.cu),
# compiled once (common/harness/student.cu, with the lab's contract
# common/lab/NN-name/contract.h) into two objects: as written, for timing,
# and the same compilation's device code instrumented, for the in-kernel
# counts.

# --- Windows: the kit runs in Linux, there through WSL 2 --------------------
# Make started from a native Windows shell (cmd or PowerShell with a Windows
# make, Git Bash, MSYS2, MinGW, Cygwin) stops here, before any command, with
# what to do instead. Those shells set OS=Windows_NT, and the Unix-like ones
# have a uname of their own (MINGW64_NT-..., MSYS_NT-..., CYGWIN_NT-...);
# inside WSL uname says Linux, whatever OS says (WSLENV can pass it on).
# Without /proc (cmd, PowerShell) uname is not asked: there may be none.
KIT_UNAME := $(if $(wildcard /proc/version),$(shell uname -s 2>/dev/null))
KIT_NATIVE_WINDOWS := $(or $(filter MINGW% MSYS% CYGWIN%,$(KIT_UNAME)),$(and $(filter Windows_NT,$(OS)),$(filter-out Linux,$(or $(KIT_UNAME),none))))
ifneq ($(KIT_NATIVE_WINDOWS),)
define KIT_WINDOWS_MESSAGE
this kit runs in Linux, and on Windows in WSL 2; this make runs in a native Windows shell ($(if $(KIT_UNAME),uname: $(KIT_UNAME),OS=$(OS))).
  1. In PowerShell, once:  wsl --install   (restart Windows, then open Ubuntu from the Start menu)
  2. The NVIDIA driver stays the Windows one. In Ubuntu install no NVIDIA driver, only the
     CUDA toolkit for WSL-Ubuntu (developer.nvidia.com/cuda-downloads), its bin folder on PATH.
  3. In Ubuntu, clone the kit into your Linux home (not under /mnt/c), and there:
       make demo
       make test
  README.md, section "Windows", says more
endef
$(error $(KIT_WINDOWS_MESSAGE))
endif
# nvidia-smi: on WSL 2 the Windows driver's, /usr/lib/wsl/lib/nvidia-smi,
# which root "will not find ... at the expected location" (NVIDIA, CUDA on
# WSL User Guide, "Known Limitations"); nor sudo, whose PATH is its own.
KIT_NVIDIA_SMI := $(or $(shell command -v nvidia-smi 2>/dev/null),$(wildcard /usr/lib/wsl/lib/nvidia-smi),nvidia-smi)

# Every lab's kit side lives in its folder: harness.cu (and harness-PART.cu),
# contract.h, lab.conf (its grading settings), test.bats.
LABS := $(sort $(notdir $(patsubst %/,%,$(dir $(wildcard common/lab/[0-9][0-9]-*/harness.cu)))))

NVCC ?= nvcc
NVCCFLAGS ?= -O3 -lineinfo
KIT_BUILD ?= build
# A build folder given as a path inside the kit (the tests give one) is used
# relative to it: make cannot name a target whose path holds a space, and
# the folder the kit sits in may hold one.
BUILD := $(patsubst ./%,%,$(subst $(CURDIR)/,,$(KIT_BUILD)))
# Elsewhere, a path with a space is reached through a link without one.
ifneq ($(words $(BUILD)),1)
  BUILD := $(shell d=/tmp/kit-build-$$(printf '%s' '$(KIT_BUILD)' | cksum | cut -d' ' -f1); \
	mkdir -p '$(KIT_BUILD)' && ln -sfn '$(KIT_BUILD)' "$$d" && echo "$$d")
  ifneq ($(words $(BUILD)),1)
    $(error the build folder '$(KIT_BUILD)' has a space in its path, which make cannot use: name another, e.g. make KIT_BUILD=/tmp/kit-build)
  endif
endif
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# Builds run JOBS at a time unless you give make -j yourself (make -j8).
PARALLEL = $$(case " $$MAKEFLAGS " in *" -j"*) ;; *) echo "-j$(JOBS)" ;; esac)
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
HAVE_GPU := $(shell $(KIT_NVIDIA_SMI) -L 2>/dev/null | grep -q '^GPU' && echo yes)
ifeq ($(origin ARCH),undefined)
  ifeq ($(HAVE_GPU),yes)
    ARCH := -arch=native
  else
    ARCH := -arch=sm_$(OLDEST_SM)
    ARCH_NOTE := no GPU here: building for sm_$(OLDEST_SM), the oldest architecture the kit supports with nvcc $(NVCC_MAJOR) (ARCH= chooses others)
  endif
endif

INCLUDES := -Icommon/lib -Icommon/harness -I.
KIT_FLAGS = $(ARCH) $(NVCCFLAGS) $(INCLUDES) -Xcompiler -Wall,-Wextra,-Wno-missing-field-initializers
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
TOOLS := $(BUILD)/bin/kit-query
# What only the tests need: make test builds them, make does not.
# The hostile fixtures (hostile-*.sed) also as workers, for the judge's tests.
FIXTURE_WORKERS := $(patsubst tests/fixtures/%.sed,$(BUILD)/tests/fixtures/%.worker,\
	$(wildcard tests/fixtures/lab[0-9][0-9]/hostile-*.sed))
TEST_TOOLS := $(BUILD)/tests/kit-unit $(BUILD)/tests/kit-query-sm75 $(FIXTURES) $(FIXTURE_WORKERS)

# make run LAB=01 (or 1, 01-coalescing, coalescing); REF=1 runs the reference.
LAB ?=
REF ?=
ARGS ?=
lab_match = $(firstword $(foreach l,$(LABS),$(if $(filter $(1) $(1)-% 0$(1) 0$(1)-% %-$(1),$(l) $(firstword $(subst -, ,$(l)))),$(l))))
lab_dir = $(call lab_match,$(LAB))

.DELETE_ON_ERROR:
.SECONDEXPANSION:
.PHONY: all build labs solutions tools test-tools lab run sanitize profile demo test check grade-class query clean help \
	need-nvcc need-lab need-lab-name need-gpu

# ALSO: more to build in the same parallel make (make test: the tests' tools).
all: need-nvcc
	$(if $(ARCH_NOTE),@echo "$(ARCH_NOTE)")
	@$(MAKE) --no-print-directory $(PARALLEL) build $(ALSO)

build: labs solutions tools
labs: $(STUDENT)
solutions: $(REFERENCE)
tools: $(TOOLS)
test-tools: $(TEST_TOOLS)

need-nvcc:
	@command -v $(firstword $(NVCC)) >/dev/null 2>&1 || { \
	    echo "nvcc not found: put the CUDA toolkit's bin folder on PATH (usually /usr/local/cuda/bin:" >&2; \
	    echo "  export PATH=/usr/local/cuda/bin:\$$PATH), or name it: make NVCC=/path/to/nvcc" >&2; exit 2; }

# --- a harnessed lab: harness object + the student's file built twice ------

# A lab's harness is common/lab/NN-name/harness.cu, and any further parts
# common/lab/NN-name/harness-PART.cu (e.g. the same kernels built with other
# flags). Each is an object of its own; a part's extra nvcc flags, if it
# needs any, are on a line of its own header comment:
#     kit-nvcc-flags: --use_fast_math
harness_objects = $(patsubst common/lab/%.cu,$(BUILD)/harness/%.o,\
	$(wildcard common/lab/$(1)/harness.cu common/lab/$(1)/harness-*.cu))
lab_headers = $(wildcard common/lab/$(1)/*.h)
contract = common/lab/$(1)/contract.h
object_flags = $(shell sed -n 's/^.*kit-nvcc-flags:[[:space:]]*//p' $(1))

define harness_rules
$(call harness_objects,$(1)): $(BUILD)/harness/%.o: common/lab/%.cu \
		$(call lab_headers,$(1)) $(LIB_HEADERS)
	@mkdir -p $$(@D)
	@echo "  NVCC  $$@"
	$(Q)$(NVCC) $(KIT_FLAGS) $$(call object_flags,$$<) -c -o $$@ $$<
endef
$(foreach lab,$(HARNESSED),$(eval $(call harness_rules,$(lab))))

# $(1): 0 (as written) or 1 (the traced build of Labs 05 and 08); $(2): the
# lab; $(3): the source. The compiler's messages name the student's file as
# the student opens it (labs/01-coalescing/coalescing.cu:34; STUDENT_SHOWN
# where it is a copy), and none of the kit's files (common/tools/student-cc.sh).
student_file = $(if $(filter /%,$(1)),$(1),./$(1))
STUDENT_CC = bash common/tools/student-cc.sh '$(or $(STUDENT_SHOWN),$(3))' '$(call student_file,$(3))' -- \
	$(NVCC) $(ARCH) $(NVCCFLAGS) $(INCLUDES) -Xcompiler -Wall,-Wextra \
	-I. -Xcompiler -Wno-unused-parameter -DKIT_COUNTED=$(1) \
	-DKIT_LAB_H='"$(call contract,$(2))"' -DKIT_STUDENT_FILE='"$(call student_file,$(3))"' \
	--keep --keep-dir $(KEEP_DIR) -c -o $@ common/harness/student.cu
# nvcc's intermediate files of one compilation (the PTX the grader checks);
# the module they hold is kept beside the object, for the judge and for the
# counted object: the fatbin (every architecture built) and one PTX.
KEEP_DIR = $(@D)/keep-$(basename $(@F))
KEEP_MODULE = cp $(KEEP_DIR)/student.fatbin $(basename $@).fatbin && \
	cp "$$(ls $(KEEP_DIR)/*.ptx | head -n 1)" $(basename $@).ptx
KEPT = $(KEEP_MODULE) && rm -rf $(KEEP_DIR)

# A lab's second object, the counted one, comes from the same compilation
# as the timed one: the timed object with its PTX instrumented by the kit's
# counting calls (common/tools/count-object.sh). A lab whose contract
# traces the student's host calls instead (it names KIT_COUNTED: Labs 05
# and 08) builds the file once more, with KIT_COUNTED=1, where its contract
# routes those calls through the kit. The counting runtime is compiled once
# per architecture, into COUNT_RUNTIME.
traced_lab = $(shell grep -l KIT_COUNTED $(call contract,$(1)) 2>/dev/null)
COUNT_RUNTIME = $(BUILD)/harness/count-runtime
COUNT_TOOLS = common/tools/count-object.sh common/tools/ptx-count.py $(COUNT_RUNTIME)/.made
# $(1): the timed object.
COUNT_OBJECT = NVCC="$(NVCC)" bash common/tools/count-object.sh $(1) $(basename $(1)).ptx $(COUNT_RUNTIME) $@
$(COUNT_RUNTIME)/.made: common/lib/kit_count_runtime.cu common/lib/kit_counted.h common/lib/kit_check.h
	$(Q)rm -rf $(@D) && mkdir -p $(@D) && touch $@
# $(1): the lab; $(2): the source; $(3): the timed object.
counted_prereqs = $(if $(call traced_lab,$(1)),$(2) common/harness/student.cu $(call contract,$(1)) \
	$(LIB_HEADERS),$(3) $(COUNT_TOOLS))
# $(1): the lab; $(2): the timed object. The source is $<.
define COUNTED_RECIPE
@echo "  $(if $(call traced_lab,$(1)),NVCC ,COUNT) $@"
$(Q)$(if $(call traced_lab,$(1)),mkdir -p $(KEEP_DIR) && $(call STUDENT_CC,1,$(1),$<) && $(KEPT),$(call COUNT_OBJECT,$(2)))
endef

# build/labs/01-coalescing/timed.o from labs/01-coalescing/coalescing.cu
$(BUILD)/%/timed.o: $$*/$$(call name_of,$$(notdir $$*)).cu common/harness/student.cu \
		$$(call contract,$$(notdir $$*)) $(LIB_HEADERS)
	@mkdir -p $(KEEP_DIR)
	@echo "  NVCC  $@"
	$(Q)$(call STUDENT_CC,0,$(notdir $*),$<)
	$(Q)$(KEPT)

$(BUILD)/%/counted.o: $$(call counted_prereqs,$$(notdir $$*),$$*/$$(call name_of,$$(notdir $$*)).cu,$(BUILD)/$$*/timed.o)
	$(call COUNTED_RECIPE,$(notdir $*),$(@D)/timed.o)

# $(1): labs or solutions; $(2): the lab.
define harnessed_program
$(BUILD)/$(1)/$(2)/$(call name_of,$(2)): $(call harness_objects,$(2)) $(BUILD)/$(1)/$(2)/timed.o $(BUILD)/$(1)/$(2)/counted.o
	@echo "  LINK  $$@"
	$(Q)$(NVCC) $(ARCH) -o $$@ $$^
endef
$(foreach lab,$(HARNESSED),$(foreach side,labs solutions,$(eval $(call harnessed_program,$(side),$(lab)))))

# --- the judge and its worker (grading; common/lib/kit_judge.h) ----------------
# Each judged lab's harness is built once more as its judge, with
# KIT_JUDGE=1 and the stubs of common/harness/judge.cu: build/judge/LAB/judge.
# Its worker is common/harness/worker.cu (build/judge/LAB/worker.o) linked
# with a student's two objects: build/solutions/LAB/worker for the
# reference, GRADED_DIR/worker for a graded file; where the lab's contract
# names the kit's side in the student's process (KIT_REMOTE_H: Labs 05 and
# 08, whose student code is host code that drives the GPUs), the worker
# holds that too. A lab whose contract says KIT_STUDENT_HOST_CODE (none
# now) is graded in one process.
JUDGED := $(foreach lab,$(LABS),$(if $(shell grep -l KIT_STUDENT_HOST_CODE $(call contract,$(lab))),,$(lab)))
judge_objects = $(patsubst common/lab/%.cu,$(BUILD)/judge/%.o,\
	$(wildcard common/lab/$(1)/harness.cu common/lab/$(1)/harness-*.cu)) $(BUILD)/judge/$(1)/stubs.o
JUDGE_FLAGS = $(KIT_FLAGS) -DKIT_JUDGE=1

define judge_rules
$(filter-out %/stubs.o,$(call judge_objects,$(1))): $(BUILD)/judge/%.o: common/lab/%.cu \
		$(call lab_headers,$(1)) $(LIB_HEADERS)
	@mkdir -p $$(@D)
	@echo "  NVCC  $$@"
	$(Q)$(NVCC) $(JUDGE_FLAGS) -DKIT_LAB_NAME='"$(1)"' $$(call object_flags,$$<) -c -o $$@ $$<
$(BUILD)/judge/$(1)/stubs.o: common/harness/judge.cu $(call lab_headers,$(1)) $(LIB_HEADERS)
	@mkdir -p $$(@D)
	@echo "  NVCC  $$@"
	$(Q)$(NVCC) $(JUDGE_FLAGS) -DKIT_LAB_H='"$(call contract,$(1))"' -DKIT_LAB_NAME='"$(1)"' -c -o $$@ $$<
$(BUILD)/judge/$(1)/judge: $(call judge_objects,$(1))
	@echo "  LINK  $$@"
	$(Q)$(NVCC) $(ARCH) -o $$@ $$^ -ldl
$(BUILD)/judge/$(1)/worker.o: common/harness/worker.cu $(call lab_headers,$(1)) \
		$(LIB_HEADERS)
	@mkdir -p $$(@D)
	@echo "  NVCC  $$@"
	$(Q)$(NVCC) $(KIT_FLAGS) -DKIT_LAB_H='"$(call contract,$(1))"' -DKIT_LAB_NAME='"$(1)"' -c -o $$@ $$<
$(foreach side,labs solutions,$(BUILD)/$(side)/$(1)/worker): $(BUILD)/%/$(1)/worker: $(BUILD)/judge/$(1)/worker.o \
		$(BUILD)/%/$(1)/timed.o $(BUILD)/%/$(1)/counted.o
	@echo "  LINK  $$@"
	$(Q)$(NVCC) $(ARCH) -o $$@ $$^
endef
$(foreach lab,$(JUDGED),$(eval $(call judge_rules,$(lab))))

# What grading a lab needs of the kit: its reference, and where it is
# judged, the judge and the reference's worker.
grading_needs = $(BUILD)/solutions/$(1)/$(call name_of,$(1)) \
	$(if $(filter $(1),$(JUDGED)),$(BUILD)/judge/$(1)/judge $(BUILD)/judge/$(1)/worker.o $(BUILD)/solutions/$(1)/worker)
judges: $(foreach lab,$(JUDGED),$(call grading_needs,$(lab)))
# The tests also run the skeletons' workers (tests/96-judge.bats).
test-judges: judges $(foreach lab,$(JUDGED),$(BUILD)/labs/$(lab)/worker)
# The judged labs, for the grader.
print-judged:
	@echo '$(JUDGED)'

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
STUDENT_SHOWN ?=
GRADED_DIR ?= $(BUILD)/graded
.PHONY: graded graded-objects print-arch judges test-judges print-judged
# The PTX's line information names the student's lines (it changes no code).
GRADED_FLAGS = $(if $(filter -lineinfo -G,$(NVCCFLAGS)),,-lineinfo)
ifneq ($(STUDENT_SRC),)
graded: $(GRADED_DIR)/$(call name_of,$(GRADED_LAB)) $(if $(filter $(GRADED_LAB),$(JUDGED)),$(GRADED_DIR)/worker)
graded-objects: $(GRADED_DIR)/timed.o $(GRADED_DIR)/counted.o
# The intermediate files stay (the grader checks them, then removes them).
# The counting runtime is the references' (make solutions built it), or,
# where the grader's build cannot write there, compiled in its own folder.
$(GRADED_DIR)/timed.o: $(STUDENT_SRC) common/harness/student.cu $(call contract,$(GRADED_LAB)) $(LIB_HEADERS)
	@mkdir -p $(KEEP_DIR)
	$(Q)$(call STUDENT_CC,0,$(GRADED_LAB),$(STUDENT_SRC)) $(GRADED_FLAGS)
	$(Q)$(KEEP_MODULE)
$(GRADED_DIR)/counted.o: $(if $(call traced_lab,$(GRADED_LAB)),$(STUDENT_SRC) common/harness/student.cu \
		$(call contract,$(GRADED_LAB)) $(LIB_HEADERS),$(GRADED_DIR)/timed.o)
ifneq ($(call traced_lab,$(GRADED_LAB)),)
	@mkdir -p $(KEEP_DIR)
	$(Q)$(call STUDENT_CC,1,$(GRADED_LAB),$(STUDENT_SRC)) $(GRADED_FLAGS)
	$(Q)$(KEEP_MODULE)
else
	$(Q)$(call COUNT_OBJECT,$(GRADED_DIR)/timed.o)
endif
$(GRADED_DIR)/$(call name_of,$(GRADED_LAB)): $(GRADED_DIR)/timed.o $(GRADED_DIR)/counted.o
	$(Q)$(NVCC) $(ARCH) -o $@ $(call harness_objects,$(GRADED_LAB)) $^
$(GRADED_DIR)/worker: $(GRADED_DIR)/timed.o $(GRADED_DIR)/counted.o
	$(Q)$(NVCC) $(ARCH) -o $@ $(BUILD)/judge/$(GRADED_LAB)/worker.o $^
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
		$$(call contract,$$(call fixture_lab,$$*)) $(LIB_HEADERS)
	@mkdir -p $(KEEP_DIR)
	@echo "  NVCC  $@"
	$(Q)$(call STUDENT_CC,0,$(call fixture_lab,$*),$<)
	$(Q)$(KEPT)

$(BUILD)/tests/fixtures/%.counted.o: $$(call counted_prereqs,$$(call fixture_lab,$$*),$(BUILD)/tests/fixtures/$$*.cu,$(BUILD)/tests/fixtures/$$*.timed.o)
	$(call COUNTED_RECIPE,$(call fixture_lab,$*),$(@D)/$(notdir $*).timed.o)

# Kept: compiler messages name them.
.SECONDARY: $(FIXTURES:%=%.cu)

$(FIXTURES): $(BUILD)/tests/fixtures/%: $$(call harness_objects,$$(call fixture_lab,$$*)) \
		$(BUILD)/tests/fixtures/%.timed.o $(BUILD)/tests/fixtures/%.counted.o
	@echo "  LINK  $@"
	$(Q)$(NVCC) $(ARCH) -o $@ $^

$(FIXTURE_WORKERS): $(BUILD)/tests/fixtures/%.worker: $$(BUILD)/judge/$$(call fixture_lab,$$*)/worker.o \
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

# need-lab: LAB names a lab (need-lab-name), and its program is built.
need-lab-name:
	@test -n "$(LAB)" || { echo "make $(MAKECMDGOALS): name a lab, e.g. make $(MAKECMDGOALS) LAB=01 (labs: $(LABS))" >&2; exit 2; }
	@test -n "$(lab_dir)" || { echo "make $(MAKECMDGOALS): there is no lab '$(LAB)'; the labs are $(LABS)" >&2; exit 2; }
need-lab: need-nvcc need-lab-name
	@$(MAKE) -s --no-print-directory $(PARALLEL) $(PROGRAM)

# need-gpu: the kit can use a GPU here, asked before anything big is built
# (kit-query alone; it says what is missing and what to do).
need-gpu: need-nvcc
	@$(MAKE) -s --no-print-directory $(BUILD)/bin/kit-query
	@$(BUILD)/bin/kit-query --check >/dev/null 2>&1 || { $(BUILD)/bin/kit-query --check; \
	    echo "make $(MAKECMDGOALS) needs a GPU. Without one, make builds everything and make test runs the kit's CPU-side tests." >&2; exit 2; }

# The program of LAB: the student's copy, or the reference with REF=1.
PROGRAM = $(BUILD)/$(if $(call yes,$(REF)),solutions,labs)/$(lab_dir)/$(call name_of,$(lab_dir))
# Without ARGS, sanitize and profile run the lab's small, quick case.
QUICK_ARGS = $(or $(ARGS),$(shell bash common/tools/lab-args.sh $(lab_dir) sanitize-args))

# make lab LAB=01: builds that lab, your copy and the reference (what `make`
# means inside a lab's folder).
lab: need-nvcc need-lab-name
	@$(MAKE) -s --no-print-directory $(PARALLEL) $(BUILD)/labs/$(lab_dir)/$(call name_of,$(lab_dir)) \
	    $(BUILD)/solutions/$(lab_dir)/$(call name_of,$(lab_dir))
	@echo "built $(lab_dir): make run LAB=$(lab_dir) runs your copy, make check LAB=$(lab_dir) grades it"

# A GPU is asked for first, except to print the options (ARGS=--help) or
# to check Lab 04's calculator alone (ARGS=--calculator-only).
run: need-lab-name $(if $(filter --help -h --calculator-only,$(ARGS)),,need-gpu) need-lab
	$(PROGRAM) $(ARGS)

# compute-sanitizer: SANITIZER, else on PATH, beside nvcc, or where the
# toolkit or NVIDIA's own package puts it.
NVCC_DIR = $(dir $(shell command -v $(firstword $(NVCC)) 2>/dev/null))
SANITIZER_PLACES = $(NVCC_DIR)compute-sanitizer $(NVCC_DIR)../compute-sanitizer/compute-sanitizer \
	$(if $(CUDA_HOME),$(CUDA_HOME)/bin/compute-sanitizer $(CUDA_HOME)/compute-sanitizer/compute-sanitizer) \
	/usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer \
	/opt/nvidia/compute-sanitizer/compute-sanitizer
SANITIZER ?= $(firstword $(shell command -v compute-sanitizer 2>/dev/null) $(wildcard $(SANITIZER_PLACES)))

# make sanitize LAB=01 [TOOL=memcheck|racecheck|initcheck|synccheck]
sanitize: need-lab
	@test -n "$(SANITIZER)" || { echo "compute-sanitizer not found: not on PATH, nor beside nvcc ($(or $(NVCC_DIR),nvcc not found)), nor in /usr/local/cuda or /opt/nvidia. It comes with the CUDA toolkit and as NVIDIA's own package; name it: make sanitize SANITIZER=/path/to/compute-sanitizer" >&2; exit 2; }
	@test -x "$(SANITIZER)" || { echo "SANITIZER=$(SANITIZER): no such program" >&2; exit 2; }
	KIT_UNDER_SANITIZER=$(or $(TOOL),memcheck) $(SANITIZER) --tool $(or $(TOOL),memcheck) --error-exitcode 99 $(PROGRAM) $(QUICK_ARGS)

# make profile LAB=01 [TOOL=ncu|nsys]: the kernels as timed (the counted
# copies, kit_count::..., are left out), or a timeline in build/profile/.
profile: need-lab
	@command -v $(or $(TOOL),ncu) >/dev/null 2>&1 || { echo "$(or $(TOOL),ncu) not found: Nsight Compute (ncu) and Nsight Systems (nsys) come with the CUDA toolkit or from NVIDIA's developer site" >&2; exit 2; }
	@mkdir -p $(BUILD)/profile
ifeq ($(or $(TOOL),ncu),nsys)
	nsys profile --trace=cuda,nvtx --force-overwrite true -o $(BUILD)/profile/$(lab_dir) $(PROGRAM) $(QUICK_ARGS)
	nsys stats --report cuda_gpu_kern_sum $(BUILD)/profile/$(lab_dir).nsys-rep
else
	ncu --clock-control none --kernel-name-base demangled -k regex:'kit_timed::' -c 40 $(PROGRAM) $(QUICK_ARGS)
endif

# The references only: the demo runs nothing else.
demo: need-gpu
	@echo "building the labs' references..."
	@$(MAKE) -s --no-print-directory $(PARALLEL) solutions
	@bash common/tools/demo.sh $(LABS)

# make report [LAB=01] [SEED=S] [ARGS=...]: your programs and the references
# on the same seed and sizes, drawn in one page, build/report/report.html:
# each handout's figures with your curves beside the reference's
# (common/report/; python3, and gnuplot for the figures).
.PHONY: report
report: need-nvcc
	@KIT_BUILD="$(BUILD)" bash common/report/report.sh $(if $(LAB),--labs $(LAB)) $(if $(SEED),--seed $(SEED)) -- $(ARGS)

# The test tools first: a missing Bats is said at once, not after the build.
test:
	@bash tests/setup-bats.sh
	@$(MAKE) --no-print-directory all ALSO="test-tools test-judges"
	@bash tests/run.sh $(TESTS)

# Grading (common/grade/grade.sh, settings in common/grade/grading.conf). The
# compiler command goes along, so that graded programs build as the labs do;
# the grader builds only the references of the labs it grades, and kit-query.
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
	@$(GRADE_ENV) bash common/grade/grade.sh $(if $(SEED),--seed $(SEED)) $(if $(call yes,$(SANITIZE)),--sanitize) $(if $(call yes,$(NO_SANDBOX)),--no-sandbox) \
		$(if $(REPORT),--report $(REPORT)) $(subst $(comma), ,$(LAB))

grade-class: need-nvcc
	@$(MAKE) --no-print-directory $(PARALLEL) solutions $(BUILD)/bin/kit-query
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
	@echo "  make lab LAB=01   build one lab (your copy and the reference)"
	@echo "  make run LAB=01   build and run your copy of a lab; REF=1 runs the reference,"
	@echo "                    ARGS=\"--size 4M\" passes options (ARGS=--help lists them)"
	@echo "  make report       your programs beside the references, in one page of figures (LAB=01)"
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
	@echo "Grading settings (points, speed factors, limits): common/grade/grading.conf; each lab's own: common/lab/NN-name/lab.conf"
	@echo "Inside a lab's folder (labs/01-coalescing/), make, make run, make check ... mean that lab."

# A target named by its path inside the kit (the tests name some so) is the
# same file as the one named relative to it.
ifeq ($(words $(CURDIR)),1)
$(CURDIR)/$(BUILD)/%: $(BUILD)/% ;
endif

# The Makefile is no target (make -B would look for a rule).
Makefile common/lab.mk: ;

# Anything else: say where the list is. (Also a file nothing can make, such
# as a lab's source that is missing.)
.DEFAULT:
	@[ -e '$@' ] || { case '$@' in */*) echo "make: there is no file '$@', and nothing in the kit makes it" >&2 ;; \
	    *) echo "make: the kit has no target '$@'; make help lists what you can do" >&2 ;; esac; exit 2; }
