/**
 * zod/mini, set up the way zod's classic API sets itself up on its first schema: English messages
 * (zod/mini registers no locale of its own, and some of what a config mistake says is zod's wording)
 * and the memoizer that gives containers cycle support; neither replaces a setting already made.
 * The config and profile schemas use zod/mini (`import * as z from 'zod/mini'`, and this module
 * for its setting up): the same checks and issues as the classic API, and about half the work to
 * build their hundred-odd schema objects, which every command run with a config file pays.
 */
import { config, globalConfig, memoizer } from 'zod/v4/core';
import en from 'zod/v4/locales/en.js';

if (!globalConfig.localeError) config(en());
if (!globalConfig.memoizer) config({ memoizer: memoizer() });
