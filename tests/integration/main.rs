mod runner;
