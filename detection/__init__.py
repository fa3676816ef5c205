"""detection"""
