mod patch_fixtures;
