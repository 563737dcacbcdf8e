# Included by the Makefile in each lab's folder (labs/NN-name/ and
# solutions/NN-name/): make there means that lab, through the kit's own
# Makefile two folders up. In labs/: make builds the lab, make run runs your
# copy, make check grades it; in solutions/, make run runs the reference.
# make help there lists the rest.
.DEFAULT_GOAL := lab
KIT_SIDE := $(if $(findstring /solutions/,$(CURDIR)/),REF=1)

# The included Makefiles are not goals.
Makefile ../../common/lab.mk: ;

%::
	@$(MAKE) --no-print-directory -C ../.. $@ LAB="$$(basename "$$PWD")" $(KIT_SIDE)
