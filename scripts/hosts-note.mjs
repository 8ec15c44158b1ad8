// Printed after npm test: the installs and the tests that need system packages run under their own commands.
console.log("The installs (the README's first command in a fresh clone, npm pack, npm install -g) are tested by: npm run test:install (README: Development)");
console.log("Tests that need system packages (sshd, Slurm, GNU parallel, jq, bubblewrap, Chromium…) run with: npm run test:hosts (README: Development)");
