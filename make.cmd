@echo off
rem make.cmd: what `make` typed in cmd.exe in this folder runs (cmd.exe looks
rem in the current folder before PATH), and `.\make` in PowerShell (which
rem does not look there, and says to type .\make). The kit runs in Linux,
rem and on Windows in WSL 2: this says how, and changes nothing.
>&2 echo make: this kit runs in Linux, and on Windows in WSL 2; cmd.exe and PowerShell cannot run it.
>&2 echo   1. In PowerShell, once:  wsl --install   (restart Windows, then open Ubuntu from the Start menu)
>&2 echo   2. The NVIDIA driver stays the Windows one. In Ubuntu install no NVIDIA driver, only the
>&2 echo      CUDA toolkit for WSL-Ubuntu (developer.nvidia.com/cuda-downloads), its bin folder on PATH.
>&2 echo   3. In Ubuntu, clone the kit into your Linux home (not under /mnt/c), and there:
>&2 echo        make demo
>&2 echo        make test
>&2 echo   README.md, section "Windows", says more.
where wsl.exe >nul 2>nul
if errorlevel 1 goto done
>&2 echo   WSL is installed here: `wsl ~` opens your Linux home, `wsl -l -v` lists your distributions and their WSL version.
:done
exit /b 2
