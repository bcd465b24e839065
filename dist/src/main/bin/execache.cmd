@echo off
rem Starts an installed execache on Windows: needs a Java 17 or newer (JAVA_HOME, else java on the PATH).
setlocal
set "EXECACHE_LIB=%~dp0..\lib"
if defined EXECACHE_JAVA (
  set "JAVA_CMD=%EXECACHE_JAVA%"
) else if defined JAVA_HOME (
  set "JAVA_CMD=%JAVA_HOME%\bin\java.exe"
) else (
  set "JAVA_CMD=java"
)
"%JAVA_CMD%" -jar "%EXECACHE_LIB%\execache-client.jar" %*
if errorlevel 9009 (
  echo execache: needs Java 17 or newer: install one and put java on the PATH or set JAVA_HOME 1>&2
  exit /b 3
)
exit /b %errorlevel%
