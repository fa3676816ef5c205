"""tsm_apps/train"""
