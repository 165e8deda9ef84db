/** The author and committer a sandboxed git command runs as in the attack cases. */
export const GIT_IDENTITY_ENVIRONMENT = {
  GIT_AUTHOR_NAME: "m",
  GIT_AUTHOR_EMAIL: "m@example.invalid",
  GIT_COMMITTER_NAME: "m",
  GIT_COMMITTER_EMAIL: "m@example.invalid",
};
