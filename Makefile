# The CUDA performance lab kit. `make help` lists what you can do.
#
# One Makefile for the whole kit: the labs are listed once below, and every
# program is built by the same pattern rules. Products go to build/.

LABS := 01-coalescing 02-grouping 03-divergence 04-occupancy 05-streams

NVCC ?= nvcc
# The GPU in this machine by default; a gencode list builds for others, e.g.
#   make ARCH="-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90"
ARCH ?= -arch=native
NVCCFLAGS ?= -O3 -lineinfo
KIT_FLAGS := $(ARCH) $(NVCCFLAGS) -Icommon -Xcompiler -Wall,-Wextra
KIT_BUILD ?= build
BUILD := $(KIT_BUILD)

# Lab 01-coalescing is the program labs/01-coalescing/coalescing.cu.
prog_of = $(1)/$(patsubst $(firstword $(subst -, ,$(1)))-%,%,$(1))
PROGS := $(foreach lab,$(LABS),$(call prog_of,$(lab)))
STUDENT := $(addprefix $(BUILD)/labs/,$(PROGS))
REFERENCE := $(addprefix $(BUILD)/solutions/,$(PROGS))
TOOLS := $(BUILD)/bin/kit-query $(BUILD)/tests/kit-unit $(BUILD)/tests/kit-query-sm75
HEADERS := $(wildcard common/*.h)

# `make run LAB=01` (or LAB=coalescing): the student's copy; REF=1 the reference.
LAB ?=
REF ?=
ARGS ?=
lab_dir = $(firstword $(filter $(LAB)-% $(LAB),$(LABS)) $(filter %-$(LAB),$(LABS)))

.DELETE_ON_ERROR:
.PHONY: all labs solutions tools run demo test check grade-class query clean help

all: labs solutions tools

labs: $(STUDENT)
solutions: $(REFERENCE)
tools: $(TOOLS)

COMPILE = @mkdir -p $(@D) && echo "  NVCC  $@" && $(NVCC) $(KIT_FLAGS) -o $@ $<

$(BUILD)/labs/%: labs/%.cu $(HEADERS)
	$(COMPILE)

$(BUILD)/solutions/%: solutions/%.cu $(HEADERS)
	$(COMPILE)

$(BUILD)/bin/kit-query: common/query.cu $(HEADERS)
	$(COMPILE)

$(BUILD)/tests/kit-unit: tests/kit-unit.cu $(HEADERS)
	$(COMPILE)

# Built for Turing only, on purpose: the tests run it on newer GPUs to see
# the kit's message for a binary without code for the GPU present.
$(BUILD)/tests/kit-query-sm75: common/query.cu $(HEADERS)
	@mkdir -p $(@D) && echo "  NVCC  $@" && \
	$(NVCC) -gencode arch=compute_75,code=sm_75 $(NVCCFLAGS) -Icommon -o $@ $<

run:
	@test -n "$(lab_dir)" || { echo "make run: name a lab, e.g. make run LAB=01 (labs: $(LABS))" >&2; exit 2; }
	@$(MAKE) --no-print-directory $(BUILD)/$(if $(REF),solutions,labs)/$(call prog_of,$(lab_dir))
	$(BUILD)/$(if $(REF),solutions,labs)/$(call prog_of,$(lab_dir)) $(ARGS)

demo: solutions tools
	@bash common/demo.sh $(LABS)

test: all
	@bash tests/run.sh $(TESTS)

# Grading (common/grade.sh, settings in common/grading.conf). The compiler
# command goes along, so that graded programs build as the labs do.
GRADE_ENV = KIT_NVCC="$(NVCC)" KIT_NVCC_FLAGS="$(ARCH) $(NVCCFLAGS) -Xcompiler -Wall,-Wextra" \
	KIT_BUILD="$(BUILD)"
SEED ?=
SANITIZE ?=
REPORT ?=
SUBMISSIONS ?=
OUT ?=
SLURM ?=

comma := ,

# LAB=01 grades one lab, LAB=01,03 several.
check: solutions $(BUILD)/bin/kit-query
	@$(GRADE_ENV) bash common/grade.sh $(if $(SEED),--seed $(SEED)) $(if $(SANITIZE),--sanitize) \
		$(if $(REPORT),--report $(REPORT)) $(subst $(comma), ,$(LAB))

grade-class:
	@$(GRADE_ENV) bash common/grade-class.sh $(if $(SLURM),--slurm) $(if $(SANITIZE),--sanitize) \
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
	@echo "Variables: ARCH (default -arch=native; a gencode list also works), NVCC, NVCCFLAGS,"
	@echo "  TESTS (bats files for make test), KIT_REQUIRE_GPU=1 (a missing GPU fails the tests)."
	@echo "Grading settings (points, speed factors, limits): common/grading.conf"
